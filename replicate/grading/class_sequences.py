"""Grading a class task on its hidden call sequences (docs/design.md, "Call sequences").

A class task minted with sequences (`LoadedTask.sequences`: recorded while the tests ran, and
widened from those) has them replayed on the candidate's class in one jail run, and each compared
with the reference's replay step by step (`grading.sequences.compare_sequences`: the first step
that differs ends the comparison; the end state compared when every step agrees).

The reward: per sequence the share of its steps matched (`SequenceComparison.reward`, dense);
per stratum (recorded, widened) the mean over its sequences; a class's score the mean over the
strata present; the sequences' score the mean over their classes (one for a class task; a module
task's sequences are those of its file's class tasks, each class weighing alike, so one class
with many sequences does not outweigh one with few).  Each class's sequences are replayed in
one jail run.  The class's raw reward is then `(1 - SEQUENCE_SHARE) * members +
SEQUENCE_SHARE * sequences`, `members` the mean over members of their inputs' stratum-weighted
reward (`grading.classes.score_members`): the class's behaviour across calls weighs as much as
its methods one by one.  A task without sequences is graded on its members alone, as before.

The counterexample of a sequence that fails is its shortest failing prefix (up to the first
step that differs), shrunk: steps are dropped (never the class call, nor a step whose result a
later one is fed) while the rest still fails against the reference's replay of it, a few rounds
at most; its steps are rendered from the reference's replay of them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replicate.batch import LoadedTask
from replicate.core import (
    CallSequence,
    Counterexample,
    HiddenSequence,
    SequenceComparison,
    SequenceStratum,
)
from replicate.errors import InfraError
from replicate.grading.sequences import compare_sequences
from replicate.jail import Jail, Replay, replay
from replicate.values import render, render_outcome

SEQUENCE_SHARE = 0.5  # of a class task's raw reward, when it has sequences
SHRINK_ROUNDS = 8
SHRINK_BUDGET_S = 10.0
_STRATUM = {SequenceStratum.RECORDED: "traced", SequenceStratum.WIDENED: "widened"}


@dataclass(frozen=True)
class SequenceScore:
    """Each hidden sequence's comparison, in order, and their score (see the module's doc)."""

    comparisons: tuple[SequenceComparison, ...]
    reward: float

    @property
    def failed(self) -> int:
        return sum(not c.passed for c in self.comparisons)

    @property
    def first_failing(self) -> int | None:
        return next((n for n, c in enumerate(self.comparisons) if not c.passed), None)


def expected_replay(hidden: HiddenSequence) -> Replay:
    return Replay(hidden.steps, hidden.state)


def replay_candidate(
    task: LoadedTask, spliced: bytes, jail: Jail, *, hash_seed: int = 0, again: bool = False
) -> tuple[Replay, ...] | str:
    """The task's sequences replayed on the spliced file's classes (one jail run a class: a
    module task's sequences are its classes'), in order; an infra problem's text."""
    if not task.sequences:
        return ()
    by_class: dict[str, list[int]] = {}
    for n, hidden in enumerate(task.sequences):
        by_class.setdefault(hidden.sequence.cls.key, []).append(n)
    found: dict[int, Replay] = {}
    settings = task.hidden.grading
    for at in by_class.values():
        sequences = [task.sequences[n].sequence for n in at]
        try:
            got = replay(
                jail, sequences[0].cls, sequences, settings, override=spliced,
                hash_seed=hash_seed, again=again,
            )  # fmt: skip
        except InfraError as exc:
            return str(exc)
        found.update(zip(at, got, strict=True))
    return tuple(found[n] for n in range(len(task.sequences)))


def score_sequences(task: LoadedTask, replays: Sequence[Replay]) -> SequenceScore | None:
    """The replays against the expected ones (None: the task has no sequences)."""
    if not task.sequences:
        return None
    settings = task.hidden.grading
    comparisons = tuple(
        compare_sequences(expected_replay(hidden), got, settings)
        for hidden, got in zip(task.sequences, _padded(replays, len(task.sequences)), strict=True)
    )
    by_class: dict[str, dict[SequenceStratum, list[float]]] = {}
    for hidden, found in zip(task.sequences, comparisons, strict=True):
        strata = by_class.setdefault(hidden.sequence.cls.key, {})
        strata.setdefault(hidden.stratum, []).append(found.reward)
    scores = [_mean([_mean(each) for each in strata.values()]) for strata in by_class.values()]
    return SequenceScore(comparisons, _mean(scores))


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _padded(replays: Sequence[Replay], length: int) -> list[Replay]:
    return [*replays, *(Replay((), problem="no outcome") for _ in range(length - len(replays)))]


def tabled(task: LoadedTask, replays: Sequence[Replay]) -> tuple[Replay, ...]:
    """The replays of a class that answers the visible tests' call sequences from a table and
    behaves as the replayed one otherwise: an agent can run the visible tests and note each
    instance's calls and answers.  Its history is a visible recorded sequence's prefix as long
    as the calls are that sequence's, so it gives the expected outcome of every step of a
    visible sequence (and its end state: generous) and of the steps any other sequence shares
    with the start of one; from the first step that leaves every visible sequence it gives what
    the replayed class gives (the degenerate classes keep no state: theirs is the same there)."""
    visible = [h.sequence for h in task.sequences if _visible(h)]
    found = []
    for hidden, got in zip(task.sequences, _padded(replays, len(task.sequences)), strict=True):
        total = len(hidden.steps)
        shared = max((_shared(hidden.sequence, other) for other in visible), default=0)
        if shared == 0:
            found.append(got)
            continue
        steps = (*hidden.steps[:shared], *got.steps[shared:])
        found.append(Replay(steps, hidden.state if shared == total else got.state))
    return tuple(found)


def _visible(hidden: HiddenSequence) -> bool:
    return hidden.stratum is SequenceStratum.RECORDED and hidden.sequence.visible


def _shared(one: CallSequence, other: CallSequence) -> int:
    """How many first steps `one` shares with `other` (same class, calls and arguments)."""
    if one.cls != other.cls:
        return 0
    same = 0
    for a, b in zip(one.steps, other.steps, strict=False):
        if (a.name, a.args_b64, a.refs) != (b.name, b.args_b64, b.refs):
            break
        same += 1
    return same


def combined(members: float, sequences: SequenceScore | None) -> float:
    """The class's raw reward: its members' and its sequences' (see the module's doc)."""
    if sequences is None:
        return members
    return (1 - SEQUENCE_SHARE) * members + SEQUENCE_SHARE * sequences.reward


def sequence_reason(score: SequenceScore) -> str:
    """What the reason adds: how many call sequences failed."""
    total = len(score.comparisons)
    if not score.failed:
        return f"; all {total} call sequences match"
    return f"; {score.failed} of {total} call sequences differ"


def steadied(
    task: LoadedTask, first: Sequence[Replay], second: Sequence[Replay]
) -> tuple[int, SequenceScore | None]:
    """The second run against the first: how many sequences pass in one and fail in the other
    (one that gave no steps in either, a timeout say, is no evidence: a busy machine), and the
    score with each sequence that gave none in the first run taken from the second (as a timed
    out input is, `grading.stability.rescued`)."""
    one, two = score_sequences(task, first), score_sequences(task, second)
    if one is None or two is None:
        return 0, one
    size = len(task.sequences)
    ran = [
        bool(a.steps) and not a.problem and bool(b.steps) and not b.problem
        for a, b in zip(_padded(first, size), _padded(second, size), strict=True)
    ]
    pairs = zip(one.comparisons, two.comparisons, ran, strict=True)
    flips = sum(a.passed != b.passed for a, b, both in pairs if both)
    taken = [
        b if not (r1.steps and not r1.problem) else r1
        for r1, b in zip(_padded(first, size), _padded(second, size), strict=True)
    ]
    return flips, score_sequences(task, taken)


def sequence_counterexample(
    task: LoadedTask, score: SequenceScore, spliced: bytes, jail: Jail, *, shrink: bool
) -> Counterexample | None:
    """The first failing sequence's shortest failing prefix, shrunk with `shrink`, rendered."""
    at = score.first_failing
    if at is None:
        return None
    hidden, found = task.sequences[at], score.comparisons[at]
    length = found.failing_prefix or len(hidden.sequence.steps)
    best, detail = hidden.sequence.prefix(length), found.detail
    if shrink:
        best, detail = shrunk(task, best, detail, spliced, jail)
    try:
        shown = replay(jail, best.cls, [best], task.hidden.grading, encode_inputs=True)[0]
    except InfraError:
        shown = Replay((), problem="not replayed")
    steps = len(hidden.sequence.steps)
    smaller = len(best.steps) < length
    return Counterexample(
        index=hidden.index,
        stratum=_STRATUM[hidden.stratum],  # type: ignore[arg-type]
        call=rendered(best, shown),
        expected=step_text(shown.steps[-1]) if shown.steps else "",
        got=detail[:300],
        detail=f"call sequence: its first {length} of {steps} steps fail"
        + (f", shrunk to {len(best.steps)}" if smaller else ""),
        shrunk_from=f"{best.cls.qualname}: {length} steps" if smaller else None,
    )


def rendered(sequence: CallSequence, shown: Replay, limit: int = 1500) -> str:
    """`x = Cls(1); x.add(2) -> None; ...`: the steps with their arguments and the reference's
    outcomes."""
    parts = []
    for n, step in enumerate(sequence.steps):
        args = _arguments(shown.arguments[n]) if n < len(shown.arguments) else "..."
        outcome = step_text(shown.steps[n]) if n < len(shown.steps) else "?"
        call = f"x = {sequence.cls.qualname}({args})" if n == 0 else f"x.{step.name}({args})"
        parts.append(call if n == 0 and not outcome.startswith("raise") else f"{call} -> {outcome}")
    text = "; ".join(parts)
    return text if len(text) <= limit else text[:limit] + "..."


def step_text(outcome: Mapping[str, Any], limit: int = 80) -> str:
    """A step's outcome: the value it returned, `self`, or `raise T('msg')`."""
    value = outcome.get("value")
    tagged = isinstance(value, dict) and value.get("t") == "tuple"
    if outcome.get("status") == "returned" and tagged:
        parts = value.get("v") or []  # type: ignore[union-attr]
        if parts == [{"t": "str", "v": "self"}]:
            return "self"
        if len(parts) == 2 and parts[0] == {"t": "str", "v": "returned"}:
            return render(parts[1], limit)
    return render_outcome(outcome, limit)


def _arguments(node: object) -> str:
    """`1, 'a', key=2` from a step's tagged ``(args, kwargs)``."""
    if not isinstance(node, dict) or node.get("t") != "tuple" or len(node.get("v", ())) != 2:
        return "..."
    args, kwargs = node["v"]
    shown = [render(arg, 80) for arg in (args.get("v") or ())]
    for pair in kwargs.get("v") or () if kwargs.get("t") == "dict" else ():
        key = pair[0].get("v") if isinstance(pair[0], dict) else None
        shown.append(f"{key}={render(pair[1], 80)}")
    return ", ".join(shown)


def shrunk(
    task: LoadedTask, prefix: CallSequence, detail: str, spliced: bytes, jail: Jail
) -> tuple[CallSequence, str]:
    """`prefix` with steps dropped while it still fails (a few rounds, a few seconds at most),
    and what differed at its last step."""
    deadline = time.monotonic() + SHRINK_BUDGET_S
    best = (prefix, detail)
    for _ in range(SHRINK_ROUNDS):
        if time.monotonic() > deadline:
            break
        steps = len(best[0].steps)
        smaller = [s for k in range(1, steps) if (s := dropped(best[0], k)) is not None]
        found = _first_failing(task, smaller, spliced, jail) if smaller else None
        if found is None:
            break
        best = found
    return best


def dropped(sequence: CallSequence, k: int) -> CallSequence | None:
    """`sequence` without its step `k` (None when a later step is fed that step's result)."""
    steps = sequence.steps
    if any(m == k for step in steps[k + 1 :] for _, m in step.refs):
        return None
    moved = [
        s.model_copy(update={"refs": tuple((slot, m - (m > k)) for slot, m in s.refs)})
        for s in steps[k + 1 :]
    ]
    return sequence.model_copy(update={"steps": (*steps[:k], *moved)})


def _first_failing(
    task: LoadedTask, sequences: Sequence[CallSequence], spliced: bytes, jail: Jail
) -> tuple[CallSequence, str] | None:
    """The first of `sequences` the candidate fails, cut to its failing prefix; None: none."""
    settings = task.hidden.grading
    try:
        expected = replay(jail, sequences[0].cls, sequences, settings)
        got = replay(jail, sequences[0].cls, sequences, settings, override=spliced)
    except InfraError:
        return None
    for sequence, one, two in zip(sequences, expected, got, strict=True):
        if one.problem or not one.steps:
            continue
        found = compare_sequences(one, two, settings, state=False)
        if found.failing_prefix is not None:
            return sequence.prefix(found.failing_prefix), found.detail
    return None
