from __future__ import annotations

from typing import Any

from replicate.core.records import CallInput, GradingSettings
from replicate.verifiers.stability import flipped, unstable_reason

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


def test_reason_counts() -> None:
    assert unstable_reason((0, 1), 3).startswith("nondeterministic: 2 of 3 hidden inputs")
