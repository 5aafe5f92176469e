"""Shrinking a counterexample found on a generated input, against the reference in the jail."""

from __future__ import annotations

from typing import Any

import pytest

from replicate.grading.grader import grade_text
from replicate.grading.shrink import proposals, simpler
from replicate.jail import Jail
from replicate.jail.calls import RepoContext
from replicate.sandbox.base import Sandbox
from replicate.values import plain
from replicate.values.plain import Items
from tests.integration.minted import Tiny


@pytest.mark.parametrize(
    ("value", "simplest"),
    [
        (37, 0),
        (-5.5, 0.0),
        ("hello", ""),
        (b"ab", b""),
        ([3, 4, 5], []),
        (Items((1, 2)), Items(())),
        ({"a": 1}, {}),
        ({1, 2}, set()),
        (range(3, 20), range(0)),
    ],
    ids=repr,
)
def test_simpler_values_keep_the_type_and_start_with_the_simplest(
    value: Any, simplest: Any
) -> None:
    found = simpler(value)
    assert found and found[0] == simplest
    assert all(type(v) is type(value) for v in found)
    assert all(plain.size(v) <= plain.size(value) for v in found)
    assert value not in found


def test_nothing_is_simpler_than_the_simplest() -> None:
    assert simpler(0) == [] and simpler(1) == [0] and simpler(-1) == [0, 1]
    assert simpler(False) == [] and simpler(None) == [] and simpler("") == []
    assert simpler((7, "x")) == [(0, "x"), (7, "")]  # a tuple keeps its arity


def test_proposals_change_one_slot_and_come_simplest_first() -> None:
    found = proposals({0: [5, 6, 7], "key": "abc"})
    assert found[0] in ({0: [], "key": "abc"}, {0: [5, 6, 7], "key": ""})
    sizes = [sum(plain.size(v) for v in p.values()) for p in found]
    assert sizes == sorted(sizes)
    assert all(sum(p[s] != v for s, v in {0: [5, 6, 7], "key": "abc"}.items()) == 1 for p in found)


CLAMP = "tinypkg.core.clamp"
BIG_WRONG = (
    "def clamp(value, low, high):\n"
    "    if value > 1000:\n"
    "        return low\n"
    "    return low if value < low else high if value > high else value\n"
)


def test_counterexample_on_a_generated_input_is_shrunk(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    task = tiny.task(CLAMP)
    verdict = grade_text(task, BIG_WRONG, Jail(tiny_ctx, local_sandbox))
    example = verdict.counterexample
    assert verdict.status == "graded" and 0.0 < (verdict.raw_reward or 0.0) < 1.0
    assert example is not None and example.stratum != "traced"
    assert example.shrunk_from is not None and "2147483647" in example.shrunk_from
    shrunk = int(example.call.split("(")[1].split(",")[0])
    assert 1000 < shrunk < 2147483647  # still failing, and simpler
    assert example.expected != example.got
    plain_verdict = grade_text(task, BIG_WRONG, Jail(tiny_ctx, local_sandbox), shrink=False)
    assert plain_verdict.counterexample is not None
    assert plain_verdict.counterexample.shrunk_from is None
    assert plain_verdict.reward == verdict.reward  # feedback only: the reward does not move
