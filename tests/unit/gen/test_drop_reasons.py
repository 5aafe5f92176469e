"""Every reason gen's code makes is a DropReason's text: the golden runs' per-input reasons,
the harvest's wrapping reasons, the strength check's, the funnel's counts, a dropped target's."""

from __future__ import annotations

import types

import pytest

from replicate.core import DropReason, Strength
from replicate.gen.golden import _first_problem, _second_problem, generated_problem
from replicate.gen.strength import rejected
from replicate.gen.target import MIN_GENERATED, MIN_TRACED, Dropped
from replicate.harvest.wrapping import _wrap_function, _wrap_method

OUTCOMES = [
    None,
    {"status": "load_error", "msg": "boom"},
    {"status": "timeout"},
    {"status": "returned", "value": {"t": "opaque", "type": "re.Match"}, "args": [], "kwargs": {}},
    {"status": "raised", "exc": {"type": "RecursionError"}, "args": [], "kwargs": {}},
    {"status": "returned", "value": {"t": "int", "v": "1"}, "args": [], "kwargs": {}, "t": 9.0},
]


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_the_golden_runs_reasons_are_members(outcome: dict[str, object] | None) -> None:
    made = [_first_problem(outcome), generated_problem(outcome, slow_s=1.0)]
    other = {"status": "returned", "value": {"t": "int", "v": "2"}, "args": [], "kwargs": {}}
    made.append(_second_problem(other, outcome))
    for problem in filter(None, made):
        assert DropReason.of(problem) is not DropReason.UNKNOWN, problem


def test_the_harvest_wrapping_reasons_are_members() -> None:
    module = types.ModuleType("m")
    module.number = 3  # type: ignore[attr-defined]

    class Owner:
        attribute = 3

    made = [
        _wrap_function("m.absent", module, "absent"),
        _wrap_function("m.number", module, "number"),
        _wrap_method("m.Owner.absent", Owner, "absent", "method"),
        _wrap_method("m.Owner.attribute", Owner, "attribute", "method"),
    ]
    found = [DropReason.of(text) for text in made]
    assert found == [
        DropReason.NOT_DEFINED,
        DropReason.NOT_CALLABLE,
        DropReason.NOT_DEFINED_IN_CLASS,
        DropReason.UNEXPECTED_CLASS_ATTRIBUTE,
    ], made


def test_the_kill_rate_reason_is_a_member() -> None:
    strength = Strength(
        mutants=10,
        killed=2,
        kill_rate=0.2,
        killed_before=2,
        likely_equivalent=0,
        added_inputs=0,
        searched_inputs=0,
        threshold=0.5,
    )
    found = rejected(strength)
    assert found == "mutant kill rate below 0.50"
    assert DropReason.of(found) is DropReason.KILL_RATE_BELOW


def test_the_counts_in_the_texts_are_the_minting_rules() -> None:
    assert f"fewer than {MIN_TRACED} traced calls" == DropReason.TOO_FEW_TRACED
    assert f"fewer than {MIN_TRACED} deterministic inputs" == DropReason.TOO_FEW_DETERMINISTIC
    assert f"fewer than {MIN_GENERATED} generated inputs survive" == DropReason.TOO_FEW_GENERATED


def test_a_dropped_target_of_no_member_is_refused() -> None:
    Dropped("validated", DropReason.SEARCHED_MISS)  # control: a member stands
    with pytest.raises(ValueError, match="not a DropReason"):
        Dropped("validated", "the reference misses searched input")
