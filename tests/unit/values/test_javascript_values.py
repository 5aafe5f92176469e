"""JavaScript value records <-> the Node runner's tagged nodes, on the trusted side (pure)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings

from replicate.values import javascript as js
from tests.js_values import cyclic, values


def through_json(value: js.JsValue) -> js.JsValue:
    return js.decode(json.loads(json.dumps(js.encode(value))))


@settings(max_examples=300, deadline=None)
@given(values())
def test_encode_then_decode_is_the_same_record(value: js.JsValue) -> None:
    assert through_json(value) == value
    assert hash(through_json(value)) == hash(value)


@pytest.mark.parametrize("value", cyclic(), ids=["self", "array-in-object", "map"])
def test_a_cycle_round_trips(value: js.JsValue) -> None:
    assert through_json(value) == value


def num(text: str) -> js.JsValue:
    return js.decode({"t": "num", "v": text})


def test_numbers_compare_as_object_is() -> None:
    assert num("NaN") == num("NaN") == js.Num.of(-math.nan)
    assert num("-0") != num("0")
    assert num("1e+21") == js.Num.of(1e21)
    assert num("Infinity") != num("-Infinity")
    assert js.encode(js.Num.of(-0.0)) == {"t": "num", "v": "-0"}
    assert js.encode(js.Num.of(math.inf)) == {"t": "num", "v": "Infinity"}
    assert js.BigInt(1) != js.Num.of(1)


def test_undefined_null_and_a_hole_are_three_values() -> None:
    found = {js.decode({"t": tag}) for tag in ("undefined", "null", "hole")}
    assert len(found) == 3


def test_field_order_and_set_or_map_order_are_not_compared() -> None:
    one, two = {"t": "num", "v": "1"}, {"t": "num", "v": "2"}
    a = {"t": "object", "v": [["a", one], ["b", two]]}
    b = {"t": "object", "v": [["b", two], ["a", one]]}
    assert js.decode(a) == js.decode(b)
    assert js.decode({"t": "set", "v": [one, two]}) == js.decode({"t": "set", "v": [two, one]})
    swapped = {"t": "map", "v": [[two, one], [one, two]]}
    assert js.decode({"t": "map", "v": [[one, two], [two, one]]}) == js.decode(swapped)
    # ...but the values in them are
    assert js.decode(a) != js.decode({"t": "object", "v": [["a", two], ["b", one]]})


def test_an_instance_is_its_class_and_fields() -> None:
    fields = [["x", {"t": "num", "v": "1"}]]
    point = js.decode({"t": "instance", "class": "Point", "v": fields})
    assert point != js.decode({"t": "instance", "class": "Vector", "v": fields})
    assert point != js.decode({"t": "object", "v": fields})


@pytest.mark.parametrize(
    "node",
    [
        {"t": "wat"},
        {"v": 1},
        [],
        {"t": "num", "v": "one"},
        {"t": "bigint", "v": "1.5"},
        {"t": "bigint", "v": "9" * 5000},
        {"t": "ref", "v": 1},
        {"t": "array", "v": [{"t": "ref", "v": 2}]},
        {"t": "object", "v": [["a", {"t": "null"}], ["a", {"t": "null"}]]},
        {"t": "object", "v": [[1, {"t": "null"}]]},
        {"t": "typed", "kind": "Wat", "v": []},
        {"t": "buffer", "v": "!!"},
        {"t": "str", "v": 3},
    ],
)
def test_a_malformed_node_is_refused(node: Any) -> None:
    with pytest.raises(js.NotJsValue):
        js.decode(node)


def test_nesting_past_the_bound_is_refused() -> None:
    node: dict[str, Any] = {"t": "null"}
    for _ in range(js.MAX_DEPTH + 2):
        node = {"t": "array", "v": [node]}
    with pytest.raises(js.NotJsValue):
        js.decode(node)
