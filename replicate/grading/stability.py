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
outcomes in, the flipped inputs or the rescued outcomes out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from replicate.core import CallInput, GradingSettings
from replicate.grading.reward import matches

Outcome = Mapping[str, Any]


def flipped(
    inputs: Sequence[CallInput],
    expected: Mapping[int, Outcome],
    first: Mapping[int, Outcome],
    second: Mapping[int, Outcome],
    settings: GradingSettings,
) -> tuple[int, ...]:
    """The indices of the inputs that pass in one run and fail in the other."""
    one = matches(inputs, expected, first, settings)
    two = matches(inputs, expected, second, settings)
    out = []
    for item, miss_one, miss_two in zip(inputs, one, two, strict=True):
        if _timed_out(first.get(item.index)) or _timed_out(second.get(item.index)):
            continue
        if (miss_one is None) != (miss_two is None):
            out.append(item.index)
    return tuple(out)


def rescued(first: Mapping[int, Outcome], second: Mapping[int, Outcome]) -> dict[int, Outcome]:
    """The first run's outcomes, with each input that timed out there (or never ran: the run hit
    its time limit) taken from the second run where it finished."""
    out = dict(first)
    for index, outcome in second.items():
        if _timed_out(first.get(index)) and not _timed_out(outcome):
            out[index] = outcome
    return out


def _timed_out(outcome: Outcome | None) -> bool:
    return outcome is None or outcome.get("status") == "timeout"


def unstable_reason(flips: Sequence[int], total: int) -> str:
    return (
        f"nondeterministic: {len(flips)} of {total} hidden inputs pass in one run and fail in "
        "another"
    )
