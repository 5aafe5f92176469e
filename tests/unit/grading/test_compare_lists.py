"""Lists and objects' fields of text leaves are compared by `==` first (`compare._nodes`,
`compare._fields`): the result must be what the node-by-node walk gives, mismatch for mismatch,
on well-formed and malformed nodes alike."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replicate.core.records import GradingSettings
from replicate.grading import compare
from replicate.grading.compare import Mismatch, compare_outcome

SETTINGS = GradingSettings()


def _list(items: list[Any]) -> dict[str, Any]:
    return {"t": "list", "v": items}


_TEXT = st.sampled_from(["0", "1", "a", "", "1.0"])
_LEAF = st.one_of(
    st.builds(lambda t, v: {"t": t, "v": v}, st.sampled_from(["int", "str", "bytes"]), _TEXT),
    st.builds(lambda b: {"t": "bool", "v": b}, st.booleans()),  # a JSON bool, not text
    st.builds(lambda v: {"t": "int", "v": v}, st.sampled_from([1, True, 1.0])),  # malformed
    st.just({"t": "int", "v": "1", "extra": "x"}),
    st.just({"t": "opaque", "v": "1"}),  # never equal, not even to itself
    st.just({"t": "float", "v": "0x1.0000000000000p+0"}),
    st.just({"t": "nope", "v": "1"}),
)
_NAME = st.sampled_from(["a", "b", "c"])


def _obj(fields: dict[str, Any]) -> dict[str, Any]:
    return {"t": "obj", "type": "m.C", "fields": fields}


def _children(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    lists = st.builds(_list, st.lists(inner, max_size=4))
    return st.one_of(lists, st.builds(_obj, st.dictionaries(_NAME, inner, max_size=3)))


_NODE = st.recursive(_LEAF, _children, max_leaves=8)


def _outcome(items: list[Any]) -> dict[str, Any]:
    return {"status": "returned", "value": _list(items), "args": [], "kwargs": {}}


def _walked(e: Any, g: Any) -> Mismatch | None:
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(compare, "_is_text_leaf", lambda node: False)  # no shortcut
        return compare_outcome(_outcome(e), _outcome(g), SETTINGS)


def _leaves(node: Any, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if node.get("t") == "list":
        for item in node["v"]:
            _leaves(item, found)
    elif node.get("t") == "obj":
        for value in node["fields"].values():
            _leaves(value, found)
    else:
        found.append(node)
    return found


def _changed(items: list[Any], n: int) -> list[Any]:
    """`items` with one leaf changed (the `n`th, counting around), or one item more."""
    out = copy.deepcopy(items)
    leaves = _leaves(_list(out), [])
    if not leaves:
        return [*out, {"t": "int", "v": "0"}]
    leaf = leaves[n % len(leaves)]
    if type(leaf["v"]) is str:
        leaf["v"] += "x"
    else:  # True, 1 or 1.0: made a value `==` cannot tell from it
        leaf["v"] = 1 if leaf["v"] is True else True
    return out


@settings(max_examples=400, deadline=None)
@given(st.lists(_NODE, max_size=6), st.integers(0, 7), st.booleans())
def test_the_shortcut_finds_what_the_walk_finds(items: list[Any], n: int, change: bool) -> None:
    other = _changed(items, n) if change else copy.deepcopy(items)
    assert compare_outcome(_outcome(items), _outcome(other), SETTINGS) == _walked(items, other)


def test_equal_text_leaves_take_the_shortcut_and_other_lists_do_not() -> None:
    assert all(map(compare._is_text_leaf, [{"t": "int", "v": "1"}, {"t": "str", "v": ""}]))
    for node in ({"t": "bool", "v": True}, {"t": "int", "v": 1}, {"t": "opaque", "v": "1"}):
        assert not compare._is_text_leaf(node)


def _nested(levels: int, bottom: dict[str, Any]) -> list[Any]:
    """`bottom` in a list nested `levels` deep: in an outcome, at depth `levels` + 1."""
    deep: list[Any] = [bottom]
    for _ in range(levels):
        deep = [_list(deep)]
    return deep


@pytest.mark.parametrize(
    ("levels", "bottom"),
    [
        (compare._MAX_DEPTH, {"t": "int", "v": "1"}),  # a list at the limit, its item past it
        (compare._MAX_DEPTH - 1, _obj({"a": {"t": "int", "v": "1"}})),  # an object's fields
    ],
    ids=["list", "fields"],
)
def test_a_value_past_the_depth_limit_differs_even_when_equal(
    levels: int, bottom: dict[str, Any]
) -> None:
    found = compare_outcome(
        _outcome(_nested(levels, bottom)), _outcome(_nested(levels, bottom)), SETTINGS
    )
    assert found is not None and found.kind == "value"
    shallow = _outcome(_nested(20, bottom))
    assert compare_outcome(shallow, copy.deepcopy(shallow), SETTINGS) is None


def test_true_and_1_differ_though_python_finds_them_equal() -> None:
    e, g = [{"t": "bool", "v": True}], [{"t": "bool", "v": 1}]
    assert e == g  # the reason bool nodes are not text leaves
    assert compare_outcome(_outcome(e), _outcome(g), SETTINGS) is not None


@settings(max_examples=300, deadline=None)
@given(st.lists(_NODE, max_size=6), st.sampled_from(["returned", "raised", "timeout"]))
def test_gradable_is_what_comparing_an_outcome_with_itself_gives(
    items: list[Any], status: str
) -> None:
    """`is_gradable` walks an outcome against itself without the equal-outcome shortcut."""
    outcome: dict[str, Any] = {**_outcome(items), "status": status}
    if status == "raised":
        outcome["exc"] = {"type": "builtins.ValueError", "msg": "m"}
    expected = compare_outcome(outcome, outcome, SETTINGS) is None
    assert compare.is_gradable(outcome, SETTINGS) == expected
