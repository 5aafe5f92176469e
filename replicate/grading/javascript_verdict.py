"""A JavaScript/TypeScript candidate graded as a Python one is (docs/design.md §4): spliced, run on
the hidden inputs (`grading.javascript.run_file`), and, when it earned anything once normalised
against the task's baseline, run a second time in a Node process of its own (another jail, a
fresh `Math.random` seed, the clock read again). An input that passes in one run and fails in
the other earns the candidate nothing (`grading.stability`: a coin flip between a right and a
wrong answer is a reward for noise); an input that timed out in the first run and finished in
the second is scored on the second, so a call a busy machine stalled does not cost a right
program its reward, while a hang hangs twice. Both runs take warm jails where `pool` has them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from replicate.batch import LoadedTask
from replicate.core import SpliceError
from replicate.grading.javascript import compared, run_file
from replicate.grading.reward import Score, normalise, score_matches
from replicate.grading.stability import Compared, flipped, rescued, unstable_reason
from replicate.jail import Sandbox, WarmPool, node, wire


@dataclass(frozen=True)
class ScriptGrade:
    """A candidate's score, or why it earns 0 without one (`refused`), and the spliced file
    (None when it did not splice) for the verdict's memorisation signal."""

    score: Score | None
    refused: str = ""
    spliced: bytes | None = None


def grade_twice(
    task: LoadedTask, candidate: str, sandbox: Sandbox, pool: WarmPool | None = None
) -> ScriptGrade:
    """`candidate` (a whole target file or a bare definition) scored on the hidden inputs, run a
    second time when it earned anything."""
    try:
        spliced = task.language().splice(task.stubbed_source(), candidate, task.hidden.target)
    except SpliceError as exc:
        return ScriptGrade(None, f"candidate rejected: {exc}")
    first = run_file(task, spliced, sandbox, pool)
    if isinstance(first, str):
        return ScriptGrade(None, first, spliced)
    one = _compared(task, first)
    settings = task.hidden.grading
    score = score_matches(task.inputs, one.misses, settings)
    base = task.hidden.baseline.raw_reward if task.hidden.baseline else None
    if normalise(score.reward, base) <= 0:
        return ScriptGrade(score, spliced=spliced)
    again = run_file(task, spliced, sandbox, pool)
    if isinstance(again, str):
        return ScriptGrade(None, f"nondeterministic: in a second run, {again}", spliced)
    two = _compared(task, again)
    flips = flipped(task.inputs, one, two)
    if flips:
        return ScriptGrade(None, unstable_reason(flips, len(task.inputs)), spliced)
    return ScriptGrade(
        score_matches(task.inputs, rescued(task.inputs, one, two), settings), "", spliced
    )


def _compared(task: LoadedTask, outcomes: Sequence[node.NodeOutcome]) -> Compared:
    """How each outcome of one run compared with the task's, beside its status (what
    `stability` reads of an outcome: whether it timed out)."""
    pairs = zip(task.inputs, outcomes, strict=True)
    shown = {item.index: wire.Outcome(status=o.status.value) for item, o in pairs}
    return Compared(shown, tuple(compared(task, outcomes)))
