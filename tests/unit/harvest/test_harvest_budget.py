"""Which calls the recorder tells apart cheaply, and how it names what does not pickle."""

from __future__ import annotations

import itertools
import pickle
from pathlib import Path
from typing import Any

import pytest

from replicate.harvest import budget as harvest_budget
from replicate.harvest import rebuild as harvest_rebuild


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


def test_one_list_passed_twice_is_another_call_than_two_equal_lists() -> None:
    """Their pickles differ too (pickle's memo keeps one object one), and a function that
    changes one argument while it reads the other may behave otherwise on each: so both are
    recorded, as two distinct calls, each pickled whole as the recorder pickles a call."""
    key = harvest_budget.plain_key
    shared = [1, 2]
    assert key((shared, shared), {}) != key(([1, 2], [1, 2]), {})
    another = [1, 2]
    assert key((shared, shared), {}) == key((another, another), {})
    assert key((shared,), {"other": shared}) != key(([1, 2],), {"other": [1, 2]})
    recorded = harvest_rebuild.dumps_capped(((shared, shared), {}), 65_536)
    assert recorded is not None
    assert recorded != harvest_rebuild.dumps_capped((([1, 2], [1, 2]), {}), 65_536)
    args, _ = pickle.loads(recorded)
    assert args[0] is args[1]
    it = iter("ab")
    args, kwargs = pickle.loads(harvest_rebuild.dumps_capped(((it,), {"again": it}), 65_536))
    assert args[0] is kwargs["again"]


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


def test_the_item_limit_halves_after_each_stopped_item_to_a_floor(tmp_path: Path) -> None:
    from replicate.harvest.plugin import ITEM_FLOOR_S, _Harvest

    state = _Harvest({"targets": [], "out": str(tmp_path / "out.jsonl"), "item_limit_s": 60})
    limits = []
    for _ in range(6):
        limits.append(state.item_limit())
        state.too_long.append("t")
    assert limits == [60.0, 30.0, 15.0, 7.5, ITEM_FLOOR_S, ITEM_FLOOR_S]
    assert (
        _Harvest({"targets": [], "out": str(tmp_path / "o2"), "item_limit_s": 2}).item_limit() == 2
    )
    assert _Harvest({"targets": [], "out": str(tmp_path / "o3")}).item_limit() == 0.0


def test_a_shape_refused_in_a_row_is_tried_again_only_now_and_then() -> None:
    refusals = harvest_budget.Refusals()
    shape = harvest_budget.shape_of("pkg.f", (object(),), {"flag": True})
    assert shape == ("pkg.f", (object,), (("flag", bool),))
    tried, reasons = [], set()
    for call in range(400):
        reason = refusals.skip(shape)
        if reason is None:
            tried.append(call)
            refusals.refused(shape, "argument does not pickle: Lock")
        else:
            reasons.add(reason)
    assert tried[:3] == [0, 1, 2] and reasons == {"argument does not pickle: Lock"}
    gaps = [later - earlier - 1 for earlier, later in itertools.pairwise(tried[2:])]
    assert gaps[:7] == [1, 2, 4, 8, 16, 32, 64] and set(gaps[7:]) == {64}
    other = harvest_budget.shape_of("pkg.f", (1,), {"flag": True})
    assert refusals.skip(other) is None  # another shape is tried
    refusals.pickled(shape)  # one that pickles: the shape is tried every time again
    assert [refusals.skip(shape) for _ in range(3)] == [None, None, None]


def test_a_call_whose_argument_types_cannot_be_a_key_has_no_shape() -> None:
    class Fussy(type):
        def __eq__(cls, other: object) -> bool:  # and so no __hash__
            return cls is other

    odd = Fussy("Odd", (), {})
    shape = harvest_budget.shape_of("pkg.f", (odd(),), {})
    assert shape is None
    refusals = harvest_budget.Refusals()
    for _ in range(10):  # every such call is tried
        assert refusals.skip(shape) is None
        refusals.refused(shape, "argument does not pickle: Odd")
