from __future__ import annotations

from typing import Any

from replicate.core.records import CallInput, GradingSettings
from replicate.grading.reward import score
from replicate.grading.stability import flipped, rescued, unstable_reason

SETTINGS = GradingSettings()


def _int(v: int) -> dict[str, Any]:
    return {"status": "returned", "value": {"t": "int", "v": str(v)}, "args": [], "kwargs": {}}


def _inputs(n: int) -> list[CallInput]:
    return [CallInput(index=i, stratum="traced", pickle_b64="") for i in range(n)]


EXPECTED = {0: _int(1), 1: _int(2), 2: _int(3)}


def test_a_coin_flip_shows_as_flipped_inputs() -> None:
    first = {0: _int(1), 1: _int(0), 2: _int(3)}
    second = {0: _int(0), 1: _int(2), 2: _int(3)}
    assert flipped(_inputs(3), EXPECTED, first, second, SETTINGS) == (0, 1)


def test_the_same_passes_and_fails_are_stable() -> None:
    first = {0: _int(1), 1: _int(7), 2: _int(3)}
    second = {0: _int(1), 1: _int(8), 2: _int(3)}  # wrong both times, differently: no flip
    assert flipped(_inputs(3), EXPECTED, first, second, SETTINGS) == ()


def test_timeouts_are_no_evidence() -> None:
    first = {0: _int(1), 1: {"status": "timeout", "t": 1.0}, 2: _int(3)}
    second = {0: _int(1), 1: _int(2)}  # input 2 missing: the run died or timed out
    assert flipped(_inputs(3), EXPECTED, first, second, SETTINGS) == ()


def test_a_timeout_counts_only_when_it_repeats() -> None:
    """A call stalled by a busy machine (the reference's own `seekable.seek` once timed out on a
    loaded CI machine) is scored on the run where it finished; a hang hangs twice."""
    stalled = {"status": "timeout", "t": 1.6}
    first = {0: _int(1), 1: stalled, 2: stalled}  # input 2 hangs in both runs
    second = {0: _int(1), 1: _int(2), 2: stalled}
    assert score(_inputs(3), EXPECTED, first, SETTINGS).mismatches == 2  # without: both count
    kept = rescued(first, second)
    assert kept == {0: _int(1), 1: _int(2), 2: stalled}
    assert score(_inputs(3), EXPECTED, kept, SETTINGS).mismatches == 1
    never_ran = {0: _int(1)}  # the first run hit its time limit before inputs 1 and 2
    assert rescued(never_ran, second) == {0: _int(1), 1: _int(2)}
    assert rescued(second, {0: _int(9), 1: _int(9)}) == second  # a finished outcome stays


def test_reason_counts() -> None:
    assert unstable_reason((0, 1), 3).startswith("nondeterministic: 2 of 3 hidden inputs")
