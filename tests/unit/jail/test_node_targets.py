"""Where the Node runner finds an extracted target, read from its file's text: a function
declaration by its binding, a `const` function and a class's methods by their export."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.jail.node import (
    CallKind,
    NodeCall,
    NodeOutcome,
    NodeTarget,
    Status,
    Thrown,
    call_json,
    outcome_json,
    read_call,
    read_outcome,
)
from replicate.jail.node_targets import export_path, node_target
from replicate.languages import get_language
from replicate.values import javascript as js


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("module.exports = Thing;\n", ()),
        ("export default class Thing {}\n", ("default",)),
        ("class Thing {}\nexport default Thing;\n", ("default",)),
        ("export class Thing {}\n", ("Thing",)),
        ("export const Thing = () => 1;\n", ("Thing",)),
        ("exports.Thing = Thing;\n", ("Thing",)),
        ("module.exports = {\n  other,\n  Thing,\n};\n", ("Thing",)),
        ("export { other, Thing };\n", ("Thing",)),
        ("module.exports = { Thing: other };\n", None),  # the key is not the binding
        ("module.exports = ThingMaker;\n", None),
        ("const Thing = 1;\n", None),  # kept in the module
    ],
)
def test_export_path(text: str, path: tuple[str, ...] | None) -> None:
    assert export_path(text, "Thing") == path


SOURCE = b"""function declared(a) { return a; }
const bound = (a) => a;
const kept = (a) => a;
class Box { get(k) { return k; } static of(v) { return v; } }
module.exports = { bound, Box };
"""


def test_node_target_of_each_kind(tmp_path: Path) -> None:
    root = tmp_path
    (root / "lib.js").write_bytes(SOURCE)
    found = {t.qualname: t for t in get_language("javascript").discover(root).targets}
    got = {name: node_target(t, SOURCE) for name, t in found.items()}
    assert got == {
        "declared": NodeTarget("lib.js", (), scope="declared"),
        "bound": NodeTarget("lib.js", ("bound",)),
        "kept": None,  # a const binding the recorder cannot re-bind, not exported
        "Box.get": NodeTarget("lib.js", ("Box",), CallKind.METHOD, "get"),
        "Box.of": NodeTarget("lib.js", ("Box",), CallKind.STATIC, "of"),
    }


def test_a_stored_call_and_outcome_read_back_equal() -> None:
    this = js.Instance("Box", js.fields({"n": js.Num.of(1)}))
    call = NodeCall(("a", js.Num.of(float("nan")), js.Undefined()), this)
    assert read_call(call_json(call)) == call
    outcomes = [
        NodeOutcome(Status.RETURNED, value=js.Num.of(-0.0), args=("a",), this=this),
        NodeOutcome(Status.RAISED, thrown=Thrown("TypeError", "bad", rejected=True), args=()),
        NodeOutcome(Status.TIMEOUT),
    ]
    for outcome in outcomes:
        assert read_outcome(outcome_json(outcome)) == outcome
