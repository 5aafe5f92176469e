"""The reward: matched fraction over ALL hidden inputs, per-stratum counts, first counterexample."""

from __future__ import annotations

from typing import Any

from replicate.core.records import CallInput, GradingSettings, Stratum, StratumCount
from replicate.verifiers.reward import score

SETTINGS = GradingSettings()


def _input(index: int, stratum: Stratum = "traced") -> CallInput:
    return CallInput(index=index, stratum=stratum, call=f"f({index})", pickle_b64="")


def _ret(n: int) -> dict[str, Any]:
    return {"status": "returned", "value": {"t": "int", "v": str(n)}, "args": [], "kwargs": {}}


def _raise(name: str) -> dict[str, Any]:
    return {"status": "raised", "exc": {"type": name, "msg": ""}, "args": [], "kwargs": {}}


INPUTS = [_input(0), _input(1), _input(2), _input(3, "raises")]
EXPECTED = {0: _ret(0), 1: _ret(1), 2: _ret(2), 3: _raise("builtins.ValueError")}


def test_all_match() -> None:
    result = score(INPUTS, EXPECTED, dict(EXPECTED), SETTINGS)
    assert result.reward == 1.0 and result.mismatches == 0 and result.counterexample is None
    assert result.counts == (
        StratumCount(stratum="raises", total=1, matched=1),
        StratumCount(stratum="traced", total=3, matched=3),
    )


def test_missing_results_count_against_the_candidate() -> None:
    result = score(INPUTS, EXPECTED, {0: _ret(0)}, SETTINGS)
    assert result.reward == 0.25 and result.mismatches == 3
    assert result.counterexample is not None
    assert result.counterexample.index == 1
    assert result.counterexample.got == "<no result>"
    assert result.counterexample.detail == "missing"


def test_first_mismatch_is_the_counterexample() -> None:
    got = {0: _ret(0), 1: _ret(7), 2: _ret(9), 3: _raise("builtins.TypeError")}
    result = score(INPUTS, EXPECTED, got, SETTINGS)
    assert result.reward == 0.25
    example = result.counterexample
    assert example is not None
    assert (example.index, example.stratum, example.call) == (1, "traced", "f(1)")
    assert (example.expected, example.got, example.detail) == ("1", "7", "value at return")
    assert result.counts == (
        StratumCount(stratum="raises", total=1, matched=0),
        StratumCount(stratum="traced", total=3, matched=1),
    )


def test_lookalike_exception_and_timeout_do_not_match() -> None:
    got = {
        0: _ret(0),
        1: _ret(1),
        2: {"status": "timeout", "t": 2.0},
        3: _raise("<unverified>tinypkg.ValueError"),
    }
    result = score(INPUTS, EXPECTED, got, SETTINGS)
    assert result.reward == 0.5
    assert result.counterexample is not None and result.counterexample.detail == "timeout"


def test_no_inputs_is_zero() -> None:
    result = score([], {}, {}, SETTINGS)
    assert result.reward == 0.0 and result.counts == () and result.counterexample is None
