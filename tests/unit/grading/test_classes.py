"""A class task's reward: the mean of its members' rewards, so one method cannot dominate; its
runs (a run a member) read as one."""

from __future__ import annotations

from typing import Any

import pytest

from replicate.core import CallInput, GradingSettings, Stratum, StratumCount, StratumWeights
from replicate.errors import ReplicateError
from replicate.gen import MINTED_KINDS, parse_kinds
from replicate.grading.classes import merged, score_members
from replicate.grading.mismatch import Mismatch
from replicate.grading.reward import score_matches
from replicate.jail import JailRun, ParsedRun
from replicate.sandbox import SandboxResult

SETTINGS = GradingSettings(stratum_weights=StratumWeights())


def _input(index: int, member: str, stratum: Stratum = "traced") -> CallInput:
    return CallInput(index=index, stratum=stratum, call=f"{member}({index})", pickle_b64="")


def _miss() -> Mismatch:
    return Mismatch("value", "return", "1", "2")


def test_each_member_weighs_the_same_whatever_its_number_of_inputs() -> None:
    inputs = [_input(i, "Box.add") for i in range(9)] + [_input(9, "Box.pop")]
    inputs = [item.model_copy(update={"member": item.call.split("(")[0]}) for item in inputs]
    found: list[Mismatch | None] = [None] * 9 + [_miss()]  # add all right, pop wrong
    result = score_members(inputs, found, SETTINGS)
    assert result.reward == pytest.approx(0.5)
    assert score_matches(inputs, found, SETTINGS).reward == pytest.approx(0.9)  # per input
    assert result.counts == (StratumCount(stratum="traced", total=10, matched=9),)
    assert result.mismatches == 1 and result.first_mismatch == inputs[9]
    assert result.counterexample is not None and result.counterexample.call == "Box.pop(9)"


def test_within_a_member_the_strata_keep_their_weights() -> None:
    inputs = [
        _input(0, "A.f").model_copy(update={"member": "A.f"}),
        _input(1, "A.f", "edge").model_copy(update={"member": "A.f"}),
        _input(2, "A.g").model_copy(update={"member": "A.g"}),
    ]
    result = score_members(inputs, [None, _miss(), None], SETTINGS)
    # A.f: traced 1.0 weight 1, edge 0.0 weight 0.5 -> 2/3; A.g: 1.0
    assert result.reward == pytest.approx((2 / 3 + 1.0) / 2)


def _run(outcomes: dict[int, Any], *, started: bool = True, timed_out: bool = False) -> JailRun:
    parsed = ParsedRun(True, None, outcomes, True, 0, started)
    result = SandboxResult(exit_code=0, stdout=b"", stderr=b"", timed_out=timed_out, duration_s=0.1)
    return JailRun(parsed, result)


def test_member_runs_read_as_one_run() -> None:
    first = _run({0: {"status": "returned"}})
    slow = _run({1: {"status": "returned"}}, timed_out=True)
    both = merged([first, slow])
    assert dict(both.parsed.outcomes) == {0: {"status": "returned"}, 1: {"status": "returned"}}
    assert both.parsed.ready and both.parsed.started and both.result.timed_out
    dead = merged([first, _run({}, started=False)])
    assert not dead.parsed.started and dead.infra_problem() is not None


def test_kinds_are_a_closed_set_and_a_whole_without_its_parts_is_refused_in_one_line() -> None:
    assert parse_kinds("function, method,class,module") == MINTED_KINDS
    assert parse_kinds("function") == {"function"}
    with pytest.raises(ReplicateError, match="module needs function and method"):
        parse_kinds("function,module")
    with pytest.raises(ReplicateError, match="unknown task kind 'classes'"):
        parse_kinds("classes")
    with pytest.raises(ReplicateError, match="class needs method"):
        parse_kinds("class")
