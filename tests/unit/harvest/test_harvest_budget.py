"""Which calls the recorder tells apart cheaply, and how it names what does not pickle."""

from __future__ import annotations

from typing import Any

import pytest

from replicate.harvest import budget as harvest_budget


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ((1,), (1.0,)),
        ((1,), (True,)),
        ((0.0,), (-0.0,)),
        (([1, 2],), ((1, 2),)),
        (("a",), (b"a",)),
        (({"a": 1},), ({"a": True},)),
    ],
)
def test_plain_keys_tell_types_apart(left: tuple[Any, ...], right: tuple[Any, ...]) -> None:
    assert harvest_budget.plain_key(left, {}) != harvest_budget.plain_key(right, {})


def test_plain_keys_of_equal_calls_are_equal_and_others_are_none() -> None:
    key = harvest_budget.plain_key
    nan = float("nan")
    assert key((nan, {1, 2}), {"k": [None]}) == key((float("nan"), {2, 1}), {"k": [None]})
    assert key((object(),), {}) is None
    assert key(([object()],), {}) is None
    assert key((list(range(harvest_budget.PLAIN_ITEMS + 1)),), {}) is None
    assert key(("x" * (harvest_budget.PLAIN_LEN + 1),), {}) is None


def test_what_names_what_does_not_pickle() -> None:
    def local() -> None: ...

    class Local:
        pass

    what = harvest_budget.unpicklable
    assert what((lambda: 0,), {}) == "local lambda"
    assert what((1,), {"f": local}) == "local function"
    assert what(([1, local],), {}) == "local function in a list"
    assert what((Local(),), {}) == "local Local"
    assert what(((n for n in range(3)),), {}) == "generator"
