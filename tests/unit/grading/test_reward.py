"""The reward: matches over ALL hidden inputs, weighted by stratum and normalised; counts."""

from __future__ import annotations

from typing import Any

from replicate.core.records import (
    CallInput,
    GradingSettings,
    Stratum,
    StratumCount,
    StratumWeights,
)
from replicate.grading.reward import DEFAULT_WEIGHTS, normalise, raw_reward, score

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


# ---------------------------------------------------------------- strata weights, normalisation

WEIGHTED = GradingSettings(stratum_weights=DEFAULT_WEIGHTS)


def _counts(**strata: tuple[int, int]) -> list[StratumCount]:
    return [StratumCount(stratum=s, total=t, matched=m) for s, (t, m) in strata.items()]  # type: ignore[arg-type]


def test_default_weights_are_stated() -> None:
    w = DEFAULT_WEIGHTS
    assert (w.traced, w.widened, w.edge, w.raises) == (1.0, 2.0, 0.5, 0.5)


def test_raw_reward_is_the_weighted_mean_of_the_strata_present() -> None:
    counts = _counts(traced=(4, 4), widened=(10, 5), edge=(4, 0))
    # (1 * 1 + 2 * 0.5 + 0.5 * 0) / (1 + 2 + 0.5)
    assert raw_reward(counts, DEFAULT_WEIGHTS) == (1 + 1) / 3.5
    assert raw_reward(counts, None) == 9 / 18  # no weights: the plain fraction
    assert raw_reward(_counts(traced=(3, 3)), DEFAULT_WEIGHTS) == 1.0
    assert raw_reward([], DEFAULT_WEIGHTS) == 0.0
    zero = StratumWeights(traced=0.0, widened=0.0, edge=0.0, raises=0.0)
    assert raw_reward(counts, zero) == 9 / 18


def test_score_weights_by_stratum() -> None:
    inputs = [_input(0), _input(1), _input(2, "widened"), _input(3, "raises")]
    expected = {0: _ret(0), 1: _ret(1), 2: _ret(2), 3: _raise("builtins.ValueError")}
    got = {0: _ret(0), 1: _ret(1), 2: _ret(9), 3: _raise("builtins.ValueError")}
    result = score(inputs, expected, got, WEIGHTED)
    assert result.reward == (1.0 + 0.0 + 0.5) / 3.5
    assert score(inputs, expected, got, SETTINGS).reward == 0.75  # old batches: unweighted
    assert result.first_mismatch == inputs[2]


def test_normalise_against_the_baseline() -> None:
    assert normalise(1.0, 0.4) == 1.0
    assert normalise(0.4, 0.4) == 0.0
    assert normalise(0.1, 0.4) == 0.0  # never negative
    assert abs(normalise(0.7, 0.4) - 0.5) < 1e-12
    assert normalise(0.7, None) == 0.7 and normalise(0.7, 0.0) == 0.7
    # A baseline of 1 pays nothing: no raw fallback, so a program that does as well as the
    # reference because the visible calls answer every hidden input earns 0 (before: its raw 1).
    assert normalise(1.0, 1.0) == 0.0 and normalise(0.5, 1.0) == 0.0
