"""JavaScript-like text of JS value records, for counterexamples."""

from __future__ import annotations

import math

from hypothesis import given, settings

from replicate.values import javascript as js
from replicate.values.javascript_text import render
from tests.js_values import values


def test_what_node_would_show() -> None:
    point = js.Instance("Point", js.fields({"x": js.Num.of(1), "my key": js.Num.of(-0.0)}))
    shown = {
        js.Undefined(): "undefined",
        js.Num.of(math.nan): "NaN",
        js.Num.of(-0.0): "-0",
        js.Num.of(2.5): "2.5",
        js.BigInt(10): "10n",
        js.Array((js.Hole(), js.Null(), "a")): '[<empty>, null, "a"]',
        point: 'Point { "my key": -0, x: 1 }',
        js.PlainObject((), null_proto=True): "[Object: null prototype] {}",
        js.ErrorValue("TypeError", "bad"): 'TypeError("bad")',
        js.js_map((("k", js.Num.of(1)),)): 'Map(1) {"k" => 1}',
        js.Date(js.Num.of(0)): "1970-01-01T00:00:00.000Z",
        js.Date(js.Num.of(math.nan)): "Invalid Date",
        js.RegExp("a+", "g"): "/a+/g",
        js.Typed("Uint8Array", (js.Num.of(1),)): "Uint8Array(1) [1]",
        js.Function(""): "[Function: (anonymous)]",
        js.PlainObject(js.fields({"self": js.Ref(1)})): "{ self: [Circular ^1] }",
        js.Settled(True): "Promise { true }",
    }
    assert {value: render(value) for value in shown} == shown


def test_a_long_value_is_cut() -> None:
    long = js.Array(tuple(js.Num.of(i) for i in range(10_000)))
    assert len(render(long, limit=50)) <= 53 and render(long, limit=50).endswith("...")


@settings(max_examples=200, deadline=None)
@given(values())
def test_any_value_renders(value: js.JsValue) -> None:
    assert isinstance(render(value), str)
