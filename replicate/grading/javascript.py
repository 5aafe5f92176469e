"""Grade a candidate for a JavaScript/TypeScript task: splice it into the stubbed file, check it
parses (tree-sitter), run it on the hidden inputs in one jailed Node process (`jail.run_node`,
the candidate's bytes mounted over the target's file) and compare each outcome with the stored
one on the trusted side, as `values.javascript` says JavaScript values are equal.

An outcome matches when the status is the same, and: for a return, the value and the arguments
after the call (and `this`, for a method); for a throw, the thrown value's class, its message
(JavaScript's errors are mostly plain `Error`s told apart by their message, so a task records
`compare_exception_message`), whether it was a rejected promise, and the arguments after it. The
raw reward is the stratum-weighted share of matches (`reward.score_matches`); the verdict
normalises it against the task's degenerate baseline (`gen.javascript_baseline`) as a Python
task's is; a verdict runs a candidate that earned anything a second time
(`grading.javascript_verdict`), its counterexample shrunk (`grading.javascript_shrink`). With a
warm pool (`replicate run`, `serve`), a run takes a Node jail started ahead for the task
(`jail.node_warm`; two are started, one per run).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from replicate.batch import LoadedTask
from replicate.core import SpliceError
from replicate.grading.mismatch import Mismatch
from replicate.grading.reward import Score, score_matches
from replicate.jail import Sandbox, WarmPool, WarmStart, node, node_deps, node_targets, node_warm
from replicate.languages import javascript_extract, syntax
from replicate.values import javascript_text

SCRIPT_LANGUAGES = frozenset({"javascript", "typescript"})


def is_script_task(task: LoadedTask) -> bool:
    return task.spec.language in SCRIPT_LANGUAGES


def task_target(task: LoadedTask) -> node.NodeTarget:
    """Where the runner finds the task's target (read from the original file, as gen did)."""
    found = node_targets.node_target(task.hidden.target, task.original_source())
    if found is None:
        raise ValueError(f"task {task.id}: the runner cannot reach {task.hidden.target.symbol}")
    return found


def run_script(
    task: LoadedTask,
    sandbox: Sandbox,
    candidate: bytes | None,
    timeout_s: float | None = None,
    pool: WarmPool | None = None,
) -> tuple[node.NodeOutcome, ...]:
    """The task's hidden inputs run on `candidate` (the whole target file), or the original;
    within `timeout_s` in all (the task's total limit, or less: a mutant's).  With a warm
    `pool`, a candidate runs in a jail started ahead for this task (`jail.node_warm`: the same
    outcomes)."""
    target, calls, held = _plan(task, timeout_s)
    tree = task.repo.tree
    if pool is not None and candidate is not None:
        run = node_warm.run_node_warm(sandbox, pool, tree, target, calls, candidate, held)
    else:
        run = node.run_node(sandbox, tree, target, calls, candidate=candidate, settings=held)
    return run.outcomes


def prewarm_script(
    task: LoadedTask, pool: WarmPool, timeout_s: float | None = None, up_to: int = 2
) -> None:
    """Start the warm jails (`up_to` of them: a candidate's two runs) later runs of candidates
    for `task` in `pool` will take (`timeout_s` as those runs are given it)."""
    target, calls, held = _plan(task, timeout_s)
    node_warm.prewarm_node(pool, task.repo.tree, target, calls, held, up_to)


@contextmanager
def warm_series(
    task: LoadedTask, sandbox: Sandbox, runs: int, timeout_s: float | None = None
) -> Iterator[WarmPool | None]:
    """A pool for `runs` runs of our own programs on `task`, one after another (gen's mutants,
    its degenerate programs): each one's jail started while the one before runs, none started
    beyond `runs`; None (every run cold) where the sandbox cannot start ahead."""
    if runs < 2 or not isinstance(sandbox, WarmStart) or not sandbox.isolated:
        yield None
        return
    with WarmPool(sandbox, per_key=2, starts=runs) as pool:
        prewarm_script(task, pool, timeout_s, up_to=2)
        yield pool


def _plan(
    task: LoadedTask, timeout_s: float | None
) -> tuple[node.NodeTarget, list[node.NodeCall], node.NodeSettings]:
    """What a run of the task's hidden inputs calls, on what, and how it is held; the tree's
    npm dependencies installed first (the request mounts them)."""
    settings = task.hidden.grading
    total = (
        settings.total_timeout_s if timeout_s is None else min(timeout_s, settings.total_timeout_s)
    )
    held = node.NodeSettings(timeout_s=total, memory_mb=settings.memory_mb)
    calls = [node.read_call(item.node_call or {}) for item in task.inputs]
    node_deps.ensure_installed(task.repo.tree)
    return task_target(task), calls, held


def compare_node(
    expected: node.NodeOutcome, got: node.NodeOutcome, message: bool = True
) -> Mismatch | None:
    """The first difference of `got` from `expected`, or None when it matches."""
    if got.status is not expected.status:
        return Mismatch("status", "", _shown(expected), _shown(got))
    if expected.status is node.Status.RETURNED and expected.value != got.value:
        return Mismatch("value", "return", _shown(expected), _shown(got))
    if expected.status is node.Status.RAISED:
        want, have = expected.thrown, got.thrown
        same = want is not None and have is not None and want.type == have.type
        same = same and want.rejected == have.rejected  # type: ignore[union-attr]
        if not same or (message and want.message != have.message):  # type: ignore[union-attr]
            return Mismatch("exception", "raise", _shown(expected), _shown(got))
    for n, (a, b) in enumerate(zip(expected.args, got.args, strict=False)):
        if a != b:
            return Mismatch(
                "args-after-call",
                f"args[{n}]",
                javascript_text.render(a),
                javascript_text.render(b),
            )
    if len(expected.args) != len(got.args) or expected.this != got.this:
        return Mismatch("args-after-call", "this", _shown(expected), _shown(got))
    if expected.status not in (node.Status.RETURNED, node.Status.RAISED):
        return Mismatch("status", "", _shown(expected), _shown(got))  # nothing to grade
    return None


def _shown(outcome: node.NodeOutcome) -> str:
    if outcome.status is node.Status.RETURNED and outcome.value is not None:
        return javascript_text.render(outcome.value)
    if outcome.thrown is not None:
        head = "rejects with" if outcome.thrown.rejected else "throws"
        return f"{head} {outcome.thrown.type}: {outcome.thrown.message}"[:300]
    return f"{outcome.status.value}: {outcome.detail}"[:300]


def compared(task: LoadedTask, outcomes: Sequence[node.NodeOutcome]) -> list[Mismatch | None]:
    """Per hidden input (in order), None when the candidate's outcome matches the stored one."""
    message = task.hidden.grading.compare_exception_message
    return [
        compare_node(node.read_outcome(task.expected[item.index]), got, message)
        for item, got in zip(task.inputs, outcomes, strict=True)
    ]


def score_script(task: LoadedTask, outcomes: Sequence[node.NodeOutcome]) -> Score:
    """The candidate's outcomes against the task's stored ones."""
    return score_matches(task.inputs, compared(task, outcomes), task.hidden.grading)


def grade_script(
    task: LoadedTask, candidate: str, sandbox: Sandbox, pool: WarmPool | None = None
) -> Score | str:
    """Candidate text (a whole target file or a bare definition, within the size limit) scored
    on the hidden inputs (in a warm jail from `pool`, when given); a str: why it earns 0
    without a score (it does not splice, parse or load)."""
    try:
        spliced = task.language().splice(task.stubbed_source(), candidate, task.hidden.target)
    except SpliceError as exc:
        return f"candidate rejected: {exc}"
    outcomes = run_file(task, spliced, sandbox, pool)
    return outcomes if isinstance(outcomes, str) else score_script(task, outcomes)


def run_file(
    task: LoadedTask, spliced: bytes, sandbox: Sandbox, pool: WarmPool | None = None
) -> tuple[node.NodeOutcome, ...] | str:
    """A spliced target file's outcomes on the hidden inputs (a candidate's, or a degenerate
    program's at gen); a str: why it earns 0 without a score (it does not parse or load)."""
    line = syntax.first_error_line(
        javascript_extract.parse_source(spliced, task.hidden.target.path)
    )
    if line is not None:
        return f"candidate does not parse: line {line}"
    outcomes = run_script(task, sandbox, spliced, pool=pool)
    failed = [o.detail for o in outcomes if o.status is node.Status.IMPORT_ERROR]
    if failed:
        return f"candidate module fails to load: {failed[0]}"[:500]
    return outcomes
