"""Golden-output helpers: call rendering, relative time limits, drop reasons."""

from __future__ import annotations

from typing import Any

import pytest

from replicate.core.records import CallKind, Span, Target
from replicate.gen.golden import GOLDEN_SETTINGS, _drop_reason, render_call, timing_settings
from tests.unit.minted import Tiny


def _target(kind: CallKind, qualname: str = "f", class_name: str | None = None) -> Target:
    span = Span(start_byte=0, end_byte=1, start_line=1, end_line=1)
    return Target(
        path="m.py",
        module="m",
        qualname=qualname,
        kind=kind,
        signature="def f(): ...",
        class_name=class_name,
        def_span=span,
        body_span=span,
        body_indent="    ",
        body_statements=1,
    )


def _int(n: int) -> dict[str, str]:
    return {"t": "int", "v": str(n)}


def _returned(value: Any, **extra: Any) -> dict[str, Any]:
    return {"status": "returned", "value": value, "args": [], "kwargs": {}, **extra}


def test_render_function_call() -> None:
    outcome = {"args_in": [_int(1), {"t": "str", "v": "a"}], "kwargs_in": {"k": _int(2)}}
    assert render_call(_target("function"), outcome) == "f(1, 'a', k=2)"
    assert render_call(_target("function"), {}) == "f()"


def test_render_method_call_shows_self() -> None:
    me = {"t": "obj", "type": "m.Box", "fields": {"n": _int(3)}}
    target = _target("method", "Box.add", "Box")
    assert render_call(target, {"args_in": [me, _int(4)]}) == "Box(n=3).add(4)"


def test_render_class_and_static_method_calls_name_the_class() -> None:
    outcome = {"args_in": [_int(4)]}
    assert render_call(_target("classmethod", "Box.make", "Box"), outcome) == "Box.make(4)"
    assert render_call(_target("staticmethod", "Box.make", "Box"), outcome) == "Box.make(4)"


def test_render_cuts_long_arguments() -> None:
    outcome = {"args_in": [{"t": "str", "v": "x" * 500}]}
    text = render_call(_target("function"), outcome)
    assert text.startswith("f('xxx") and text.endswith("...)") and len(text) < 140


@pytest.mark.parametrize(
    ("max_call", "total", "call_timeout", "total_timeout"),
    [
        (0.0, 0.0, 1.0, 30.0),  # floors
        (0.5, 10.0, 5.0, 70.0),  # 10x the slowest call, 5x the total + 20 s
        (3.0, 100.0, 10.0, 300.0),  # ceilings
        (0.1234, 2.0, 1.234, 30.0),
    ],
)
def test_timing_settings(
    max_call: float, total: float, call_timeout: float, total_timeout: float
) -> None:
    settings = timing_settings(max_call, total)
    assert settings.call_timeout_s == call_timeout
    assert settings.total_timeout_s == total_timeout


def test_drop_reasons() -> None:
    ok = _returned(_int(1), t=0.1)
    assert _drop_reason(ok, _returned(_int(1), t=0.9)) is None  # time is not behaviour
    assert _drop_reason(None, ok) == "reference hangs or crashes the process"
    assert _drop_reason(ok, None) == "reference hangs or crashes the process"
    assert (
        _drop_reason({"status": "load_error", "msg": "x"}, ok) == "input does not load in the jail"
    )
    assert _drop_reason({"status": "timeout", "t": 5.0}, ok) == "reference hangs"
    opaque = _returned({"t": "opaque", "type": "m.X"})
    assert (
        _drop_reason(opaque, opaque) == "outcome not comparable (opaque, too large or unverifiable)"
    )
    assert _drop_reason(ok, _returned(_int(2))) == "nondeterministic outcome"
    raised = {
        "status": "raised",
        "exc": {"type": "builtins.ValueError", "msg": "m"},
        "args": [],
        "kwargs": {},
    }
    assert _drop_reason(raised, dict(raised)) is None
    assert GOLDEN_SETTINGS.call_timeout_s >= 5.0


def test_minted_inputs_carry_rendered_calls_and_strata(tiny: Tiny) -> None:
    parse = tiny.task("tinypkg.core.parse_int")
    assert [i.call for i in parse.inputs] == [
        "parse_int('12')",
        "parse_int(' -7 ')",
        "parse_int('x1')",
        "parse_int('')",
    ]
    assert [i.stratum for i in parse.inputs] == ["traced", "traced", "raises", "raises"]
    add = tiny.task("tinypkg.core.Counter.add")
    assert [i.call for i in add.inputs] == [
        "Counter(total=0).add(2)",
        "Counter(total=2).add(3)",
        "Counter(total=10).add(-4)",
    ]
    assert all(i.origin == "tests/test_core.py::test_counter" for i in add.inputs)
    # expected outcomes keep the arguments after the call, not the ones before, nor timings
    assert all(set(o) == {"status", "value", "args", "kwargs"} for o in add.expected.values())
    assert add.expected[0]["args"][0]["fields"]["total"] == _int(2)
    grading = add.hidden.grading
    assert 1.0 <= grading.call_timeout_s <= 10.0 and 30.0 <= grading.total_timeout_s <= 300.0
    assert add.hidden.validation.reference_reward == 1.0
    assert add.hidden.validation.stub_reward == 0.0
