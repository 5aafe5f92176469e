"""Grading twice: a candidate whose passes come and go between runs earns nothing (docs/design.md §4
and §5, item 17).

A candidate that answers at random (a coin flip between a right and a wrong answer, say) wins
occasional passes; over an RL run those are a reward for noise.  The grader runs a candidate that
earned anything a second time, with the same hash seed, and compares which hidden inputs passed.
Outputs that differ without changing pass or fail (an address in an exception message) do not
count, and neither does an input that timed out in either run: a busy machine is no evidence of
nondeterminism.  A timeout counts only when it repeats: an input that timed out in the first run and
finished in the second is scored on the second (`rescued`), so a call stalled by a busy machine
does not cost a right program its reward, while a hang hangs twice.  Pure: the two runs'
outcomes, each compared once (`compared`), in; the flipped inputs or the rescued comparisons
out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from replicate.batch import StoredOutcome
from replicate.core import CallInput, GradingSettings
from replicate.grading.compare import Mismatch
from replicate.grading.reward import matches
from replicate.jail import wire

Outcome = wire.Outcome


@dataclass(frozen=True)
class Compared:
    """One run's outcomes and, per input in order, how each compared (None: a match)."""

    outcomes: Mapping[int, Outcome]
    misses: tuple[Mismatch | None, ...]


def compared(
    inputs: Sequence[CallInput],
    expected: Mapping[int, StoredOutcome],
    outcomes: Mapping[int, Outcome],
    settings: GradingSettings,
) -> Compared:
    return Compared(outcomes, tuple(matches(inputs, expected, outcomes, settings)))


def flipped(inputs: Sequence[CallInput], first: Compared, second: Compared) -> tuple[int, ...]:
    """The indices of the inputs that pass in one run and fail in the other."""
    out = []
    for item, miss_one, miss_two in zip(inputs, first.misses, second.misses, strict=True):
        if _timed_out(first.outcomes.get(item.index)) or _timed_out(
            second.outcomes.get(item.index)
        ):
            continue
        if (miss_one is None) != (miss_two is None):
            out.append(item.index)
    return tuple(out)


def rescued(
    inputs: Sequence[CallInput], first: Compared, second: Compared
) -> tuple[Mismatch | None, ...]:
    """How each input compares on the first run's outcomes, with each input that timed out there
    (or never ran: the run hit its time limit) taken from the second run where it finished."""
    return tuple(
        two if _rescued(first.outcomes.get(item.index), second.outcomes.get(item.index)) else one
        for item, one, two in zip(inputs, first.misses, second.misses, strict=True)
    )


def _rescued(first: Outcome | None, second: Outcome | None) -> bool:
    return _timed_out(first) and second is not None and not _timed_out(second)


def _timed_out(outcome: Outcome | None) -> bool:
    return outcome is None or outcome.get("status") == "timeout"


def unstable_reason(flips: Sequence[int], total: int) -> str:
    return (
        f"nondeterministic: {len(flips)} of {total} hidden inputs pass in one run and fail in "
        "another"
    )
