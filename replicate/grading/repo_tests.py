"""The repository's own tests that exercise a target, run against a candidate: an extra signal.

The tests are the ones whose runs called the target while inputs were harvested (the `origin` of
each hidden input); for a module task, also the test files that import the module
(`grading/modules.py`). They run in the sandbox on a copy of the PRISTINE tree with only the target
file replaced — the pristine conftest and configuration, never the agent's workspace — and their
pass/fail counts are reported beside the reward; they do not change it.
"""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from replicate import confined
from replicate.batch import LoadedTask
from replicate.core import CallInput, RepoTestsCount, SpliceError, Target, Verdict
from replicate.grading.grader import stubbed_source
from replicate.grading.modules import module_test_ids
from replicate.harvest import from_documentation
from replicate.jail import JAIL_ENV, Jail, Limits, Mount, SandboxRequest
from replicate.scratch import temporary_dir

MAX_NODE_IDS = 200
GRADE_TIMEOUT_S = 120.0  # for the tests of one candidate beside its grade


@dataclass(frozen=True)
class RepoTestsOutcome:
    selected: int
    passed: int
    failed: int  # failures and errors (a candidate that breaks collection fails them all)
    timed_out: bool = False


def node_ids(inputs: Iterable[CallInput]) -> tuple[str, ...]:
    """The distinct test node ids that produced a task's inputs, in first-seen order; not a
    documentation file's examples (pytest would not collect it without the harvest's options,
    and its printed outputs are not the test: `harvest/documented.py`)."""
    ids = (i.origin for i in inputs if i.origin and not from_documentation(i.origin))
    return tuple(dict.fromkeys(ids))[:MAX_NODE_IDS]


def run_repo_tests(
    jail: Jail,
    target: Target,
    candidate: bytes | None,
    ids: Sequence[str],
    timeout_s: float = 300.0,
) -> RepoTestsOutcome:
    """Run the selected tests with the candidate file in place (None: the pristine file)."""
    if not ids:
        return RepoTestsOutcome(0, 0, 0)
    ctx = jail.ctx
    with temporary_dir("replicate-repotests-") as scratch_name:
        scratch = Path(scratch_name)
        work = scratch / "work"
        shutil.copytree(ctx.tree, work, symlinks=True)
        if candidate is not None:
            confined.write_bytes(work, target.path, candidate)
        report = scratch / "report.xml"
        argv: tuple[str, ...] = (str(ctx.python), "-m", "pytest", "-q", "-p", "no:cacheprovider")
        argv += ("--doctest-modules", f"--junitxml={report}", *ids)
        request = SandboxRequest(
            argv=argv,
            env={**JAIL_ENV, "PYTHONHASHSEED": "0", "PYTHONPATH": ":".join(ctx.sys_path(work))},
            cwd=str(work),
            timeout_s=timeout_s,
            mounts=(*ctx.mounts(), Mount.same(str(scratch), writable=True)),
            limits=Limits(memory_mb=4096, pids=512, output_bytes=100_000),
        )
        result = jail.sandbox.run(request)
        passed, failed = _counts(report)
    selected = max(len(ids), passed + failed)  # an id may be a whole file (a module task's)
    if result.timed_out or passed + failed == 0:
        return RepoTestsOutcome(selected, passed, selected - passed, result.timed_out)
    return RepoTestsOutcome(selected, passed, max(failed, selected - passed))


def candidate_repo_tests(task: LoadedTask, candidate: str, jail: Jail) -> RepoTestsCount | None:
    """The task's repo tests on the candidate text spliced as grading splices it (None when it
    does not splice: the verdict already says why)."""
    target = task.hidden.target
    try:
        spliced = task.language().splice(stubbed_source(task), candidate, target)
    except SpliceError:
        return None
    ids = node_ids(task.inputs)
    if target.kind == "module":  # the test files that import the module, whole, too
        ids = module_test_ids(jail.ctx.tree, target, ids, MAX_NODE_IDS)
    found = run_repo_tests(jail, target, spliced, ids, GRADE_TIMEOUT_S)
    return RepoTestsCount(
        selected=found.selected,
        passed=found.passed,
        failed=found.failed,
        timed_out=found.timed_out,
    )


def with_repo_tests(verdict: Verdict, task: LoadedTask, candidate: str, jail: Jail) -> Verdict:
    """`verdict` with the repo tests' count of the candidate beside it (a graded verdict only:
    a violation or an infrastructure error has nothing the tests could add)."""
    if verdict.status != "graded":
        return verdict
    found = candidate_repo_tests(task, candidate, jail)
    return verdict.model_copy(update={"repo_tests": found})


def _counts(report: Path) -> tuple[int, int]:
    """(passed, failed or errored) from a JUnit XML report; skipped tests count as neither."""
    try:
        root = ElementTree.parse(report).getroot()
    except (OSError, ElementTree.ParseError):
        return 0, 0
    passed = failed = 0
    for case in root.iter("testcase"):
        kinds = {child.tag for child in case}
        if kinds & {"failure", "error"}:
            failed += 1
        elif "skipped" not in kinds:
            passed += 1
    return passed, failed
