"""Widening with fast-check in the jail: new calls shaped like the recorded ones, the same for a
seed, reaching values the recorded ones do not (negative numbers, -0, NaN, longer strings and
arrays), and each a value the runner rebuilds and hands back unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.errors import InfraError
from replicate.jail.node import CallKind, NodeCall, NodeTarget, Status, run_node
from replicate.jail.node_widening import Widening, read_widened, widen_calls, widen_node_calls
from replicate.sandbox import Sandbox, get_sandbox
from replicate.values import javascript as js

NUMBERS = [(js.Num.of(1),), (js.Num.of(7),), (js.Num.of(30),)]
STRINGS = [("1h",), ("2 days",), ("100",)]
OBJECT = js.PlainObject(js.fields({"long": True, "unit": "ms"}))
MIXED = [
    ("1m", OBJECT),
    ("3s", js.PlainObject(js.fields({"long": False}))),
    (js.Array((js.Num.of(1), "a")),),
]


@pytest.fixture(scope="module")
def local() -> Sandbox:
    return get_sandbox("local")


def numbers(calls: tuple[tuple[js.JsValue, ...], ...]) -> list[js.Num]:
    return [a for call in calls for a in call if isinstance(a, js.Num)]


def test_numbers_reach_the_edges_and_the_other_sign(local: Sandbox) -> None:
    widened = widen_calls(local, NUMBERS, Widening(count=200, seed=3))
    assert 80 <= len(widened) <= 200 and all(len(call) == 1 for call in widened)  # distinct only
    seen = numbers(widened)
    assert len(seen) == len(widened)
    assert js.Num.of(float("nan")) in seen and js.Num.of(-0.0) in seen
    assert js.Num.of(float("inf")) in seen and js.Num.of(float("-inf")) in seen
    assert any(n.value < 0 for n in seen) and any(n.value > 30 for n in seen)
    assert any(not float(n.value).is_integer() for n in seen if n.value == n.value)
    assert not set(widened) & set(NUMBERS)  # none repeats a recorded call


def test_strings_grow_and_keep_the_recorded_characters(local: Sandbox) -> None:
    widened = widen_calls(local, STRINGS, Widening(count=200))
    texts = [call[0] for call in widened]
    assert all(isinstance(t, str) for t in texts)
    assert max(len(t) for t in texts if isinstance(t, str)) > len("2 days")
    alphabet = set("1h2 days100")
    like = [t for t in texts if isinstance(t, str) and t and set(t) <= alphabet]
    assert len(like) >= 20  # most are made of what the recorded strings are made of
    assert any(isinstance(t, str) and any(ord(c) > 127 for c in t) for t in texts)


def test_arities_keys_and_containers_follow_the_samples(local: Sandbox) -> None:
    widened = widen_calls(local, MIXED, Widening(count=150, seed=1))
    assert {len(call) for call in widened} == {1, 2}
    options = [call[1] for call in widened if len(call) == 2]
    assert all(isinstance(o, js.PlainObject) for o in options)
    keys = [{k for k, _ in o.fields} for o in options if isinstance(o, js.PlainObject)]
    assert all("long" in k and k <= {"long", "unit"} for k in keys)  # `unit` seen once: optional
    assert {"long"} in keys and {"long", "unit"} in keys
    arrays = [call[0] for call in widened if isinstance(call[0], js.Array)]
    assert arrays and max(len(a.items) for a in arrays) > 2
    items = {type(i) for a in arrays for i in a.items}
    assert items <= {js.Num, str} and items == {js.Num, str}


def test_kinds_it_cannot_vary_are_passed_as_recorded(local: Sandbox) -> None:
    instance = js.Instance("Point", js.fields({"x": js.Num.of(1)}))
    regexp = js.RegExp("a+", "g")
    widened = widen_calls(local, [(instance, regexp, js.Num.of(1))], Widening(count=20))
    assert len(widened) > 5 and all(call[:2] == (instance, regexp) for call in widened)
    dated = widen_calls(local, [(js.Date(js.Num.of(0)), js.BigInt(5))], Widening(count=30))
    assert len({call[0] for call in dated}) > 10 and all(
        isinstance(d, js.Date) and isinstance(b, js.BigInt) for d, b in dated
    )


def test_the_same_seed_the_same_calls(local: Sandbox) -> None:
    first = widen_calls(local, MIXED, Widening(count=50, seed=7))
    assert first == widen_calls(local, MIXED, Widening(count=50, seed=7))
    assert first != widen_calls(local, MIXED, Widening(count=50, seed=8))


def test_widened_calls_cross_the_runner_unchanged(local: Sandbox, tmp_path: Path) -> None:
    (tmp_path / "echo.js").write_text("module.exports = (...args) => args;\n")
    widened = widen_calls(local, NUMBERS + STRINGS + MIXED, Widening(count=120, seed=2))
    calls = [NodeCall(args) for args in widened]
    run = run_node(local, tmp_path, NodeTarget("echo.js", ()), calls)
    for call, outcome in zip(calls, run.outcomes, strict=True):
        assert outcome.status is Status.RETURNED
        assert outcome.value == js.Array(call.args)
        assert all(js.decode(js.encode(a)) == a for a in call.args)


def test_nothing_recorded_nothing_widened_and_an_unfinished_run_is_infra(local: Sandbox) -> None:
    assert widen_calls(local, [], Widening(count=10)) == ()
    assert widen_calls(local, NUMBERS, Widening(count=0)) == ()
    with pytest.raises(InfraError, match="did not finish"):
        read_widened(b"abc widened\n", "abc", 1)
    with pytest.raises(ValueError, match="count"):
        Widening(count=-1)


def test_a_methods_calls_keep_a_recorded_this(local: Sandbox, tmp_path: Path) -> None:
    (tmp_path / "counter.js").write_text(
        "class Counter { add(k) { return this.n + k; } }\nmodule.exports = { Counter };\n"
    )
    selves = [js.Instance("Counter", js.fields({"n": js.Num.of(n)})) for n in (1, 5)]
    recorded = [NodeCall((js.Num.of(2),), selves[0]), NodeCall((js.Num.of(3),), selves[1])]
    widened = widen_node_calls(local, recorded, Widening(count=40))
    assert len(widened) > 10 and {c.this for c in widened} <= set(selves)
    assert all(len(c.args) == 1 and isinstance(c.args[0], js.Num) for c in widened)
    target = NodeTarget("counter.js", ("Counter",), CallKind.METHOD, "add")
    run = run_node(local, tmp_path, target, widened)
    assert all(o.status is Status.RETURNED for o in run.outcomes)
    functions = widen_node_calls(local, [NodeCall(("a",))], Widening(count=10))
    assert functions and all(c.this is None for c in functions)
