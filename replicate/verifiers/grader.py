"""Grade one candidate for one task: splice, run in the jail, compare on the trusted side.

One splicing rule serves every entry point (`replicate grade`, `replicate run`, gen-time
validation): the candidate text is spliced into the stubbed target file (BRIEF §3), the result is
mounted over the target file of a pristine tree, and the runner calls it on the hidden inputs.
Expected outputs never enter the candidate's process; comparison happens here.
"""

from __future__ import annotations

import time

from replicate import GRADER_VERSION
from replicate.batch.store import LoadedTask
from replicate.core.records import Verdict, VerdictStatus
from replicate.core.splice import SpliceError, splice, stub_source
from replicate.harness.jail import RepoContext, run_calls
from replicate.harness.sandbox.base import Sandbox
from replicate.verifiers.reward import score


def original_source(task: LoadedTask) -> bytes:
    return (task.repo.tree / task.hidden.target.path).read_bytes()


def stubbed_source(task: LoadedTask) -> bytes:
    return stub_source(original_source(task), task.hidden.target)


def _verdict(
    task: LoadedTask, started: float, reward: float | None, status: VerdictStatus, reason: str
) -> Verdict:
    return Verdict(
        task_id=task.id,
        reward=reward,
        status=status,
        reason=reason,
        grader_version=GRADER_VERSION,
        duration_s=round(time.monotonic() - started, 3),
    )


def _syntax_problem(source: bytes, path: str) -> str | None:
    try:
        compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"candidate does not parse: line {exc.lineno}: {exc.msg}"
    except ValueError as exc:  # null bytes
        return f"candidate does not parse: {exc}"
    return None


def grade_text(
    task: LoadedTask, candidate: str, ctx: RepoContext, sandbox: Sandbox, *, hash_seed: int = 0
) -> Verdict:
    """Grade candidate text (a whole target file or a bare definition) against the task."""
    started = time.monotonic()
    target = task.hidden.target
    try:
        spliced = splice(stubbed_source(task), candidate, target)
    except SpliceError as exc:
        return _verdict(task, started, 0.0, "graded", f"candidate rejected: {exc}")
    problem = _syntax_problem(spliced, target.path)
    if problem:
        return _verdict(task, started, 0.0, "graded", problem)
    run = run_calls(
        ctx,
        target,
        task.inputs,
        sandbox,
        task.hidden.grading,
        override=spliced,
        hash_seed=hash_seed,
    )
    infra = run.infra_problem()
    if infra:
        return _verdict(task, started, None, "infra_error", infra)
    if run.parsed.import_error is not None:
        return _verdict(
            task,
            started,
            0.0,
            "graded",
            f"candidate module fails to import: {run.parsed.import_error}",
        )
    result = score(task.inputs, task.expected, run.parsed.outcomes, task.hidden.grading)
    reason = _reason(result.mismatches, len(task.inputs), run.result.timed_out, run.parsed.ready)
    verdict = _verdict(task, started, round(result.reward, 6), "graded", reason)
    return verdict.model_copy(
        update={"counts": result.counts, "counterexample": result.counterexample}
    )


def _reason(mismatches: int, total: int, timed_out: bool, ready: bool) -> str:
    if not ready:
        return "candidate process died while importing"
    if mismatches == 0:
        return f"all {total} hidden inputs match"
    tail = "; the run hit its time limit" if timed_out else ""
    return f"{mismatches} of {total} hidden inputs differ{tail}"
