from __future__ import annotations

from typing import Any

from replicate.core.records import CallInput, GradingSettings
from replicate.grading.reward import score, score_matches
from replicate.grading.stability import Compared, compared, flipped, rescued, unstable_reason

SETTINGS = GradingSettings()


def _int(v: int) -> dict[str, Any]:
    return {"status": "returned", "value": {"t": "int", "v": str(v)}, "args": [], "kwargs": {}}


def _inputs(n: int) -> list[CallInput]:
    return [CallInput(index=i, stratum="traced", pickle_b64="") for i in range(n)]


EXPECTED = {0: _int(1), 1: _int(2), 2: _int(3)}


def _flips(first: dict[int, Any], second: dict[int, Any]) -> tuple[int, ...]:
    return flipped(_inputs(3), _compared(first), _compared(second))


def _compared(outcomes: dict[int, Any]) -> Compared:
    return compared(_inputs(3), EXPECTED, outcomes, SETTINGS)


def _rescued_mismatches(first: dict[int, Any], second: dict[int, Any]) -> int:
    kept = rescued(_inputs(3), _compared(first), _compared(second))
    return score_matches(_inputs(3), kept, SETTINGS).mismatches


def test_a_coin_flip_shows_as_flipped_inputs() -> None:
    first = {0: _int(1), 1: _int(0), 2: _int(3)}
    second = {0: _int(0), 1: _int(2), 2: _int(3)}
    assert _flips(first, second) == (0, 1)


def test_the_same_passes_and_fails_are_stable() -> None:
    first = {0: _int(1), 1: _int(7), 2: _int(3)}
    second = {0: _int(1), 1: _int(8), 2: _int(3)}  # wrong both times, differently: no flip
    assert _flips(first, second) == ()


def test_timeouts_are_no_evidence() -> None:
    first = {0: _int(1), 1: {"status": "timeout", "t": 1.0}, 2: _int(3)}
    second = {0: _int(1), 1: _int(2)}  # input 2 missing: the run died or timed out
    assert _flips(first, second) == ()


def test_a_timeout_counts_only_when_it_repeats() -> None:
    """A call stalled by a busy machine (the reference's own `seekable.seek` once timed out on a
    loaded CI machine) is scored on the run where it finished; a hang hangs twice."""
    stalled = {"status": "timeout", "t": 1.6}
    first = {0: _int(1), 1: stalled, 2: stalled}  # input 2 hangs in both runs
    second = {0: _int(1), 1: _int(2), 2: stalled}
    assert score(_inputs(3), EXPECTED, first, SETTINGS).mismatches == 2  # without: both count
    assert _rescued_mismatches(first, second) == 1  # input 1 from the second run
    never_ran = {0: _int(1)}  # the first run hit its time limit before inputs 1 and 2
    assert _rescued_mismatches(never_ran, second) == 1
    assert _rescued_mismatches(never_ran, {0: _int(1), 1: _int(2), 2: _int(3)}) == 0
    assert _rescued_mismatches(second, {0: _int(9), 1: _int(9)}) == 1  # finished outcomes stay
    # the same as scoring the outcomes the first run would have had with them
    assert (
        _rescued_mismatches(first, second)
        == score(_inputs(3), EXPECTED, {0: _int(1), 1: _int(2), 2: stalled}, SETTINGS).mismatches
    )


def test_reason_counts() -> None:
    assert unstable_reason((0, 1), 3).startswith("nondeterministic: 2 of 3 hidden inputs")
