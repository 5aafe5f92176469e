"""The families of degenerate programs: which programs a target gets, the constants, literals,
and the original that is itself one."""

from __future__ import annotations

from typing import Any

from replicate.core import Baseline, DegenerateScore
from replicate.core.records import CallKind, Target
from replicate.gen.baseline import floor, too_weak, trivial_statement
from replicate.gen.families import (
    EMPTY_BY_TAG,
    common_values,
    constant_programs,
    empties,
    identities,
    literal,
)
from replicate.grading import MAX_BASELINE, MAX_CONSTANT_BASELINE
from replicate.values import plain
from tests.targets import made_target


def _target(signature: str, kind: CallKind = "function") -> Target:
    return made_target("f" if kind == "function" else "Box.f", kind, signature)


def _returned(value: Any) -> dict[str, Any]:
    return {"status": "returned", "value": plain.encode(value)}


def test_the_identity_on_each_named_parameter_the_first_argument_first() -> None:
    found = identities(_target("def f(a, b=1, *rest, c, **more):"))
    assert [p.body for p in found] == ["return a", "return b", "return c"]
    assert [p.name for p in found] == ["return a", "return parameter b", "return parameter c"]
    method = identities(_target("    def f(self, x):", "method"))
    assert [p.body for p in method] == ["return x", "return self"]  # self is meaningful
    klass = identities(_target("    def f(cls, x):", "classmethod"))
    assert [p.body for p in klass] == ["return x"]  # cls is not an argument of the call
    assert [p.body for p in identities(_target("def f(*items):"))] == ["return items"]
    assert identities(_target("def f(:")) == []


def test_the_empty_value_of_each_parameter_but_self() -> None:
    found = empties(_target("    def f(self, x, *, y=None):", "method"))
    assert [p.body for p in found] == ["return x.__class__()", "return y.__class__()"]
    assert [p.name for p in found] == ["return empty x", "return empty y"]
    assert empties(_target("    def f(self):", "method")) == []


def test_the_constants_are_the_commonest_values_and_the_empty_of_the_commonest_type() -> None:
    expected = [_returned("b"), _returned("a"), _returned("b"), _returned(3)]
    expected.append({"status": "raised", "exc": {"type": "builtins.ValueError", "msg": ""}})
    found = common_values(expected)
    assert [plain.decode(v) for v in found] == ["b", "a", 3, ""]
    assert common_values([_returned(""), _returned("")]) == [plain.encode("")]  # once
    assert common_values([]) == []
    for tag, node in EMPTY_BY_TAG.items():  # each empty value is what the runner would write
        value = plain.decode(node)
        assert node["t"] == tag and not value and plain.encode(value) == node


def test_constants_run_in_the_jail_are_written_as_literals_that_read_back() -> None:
    assert literal(plain.encode("it's")) == '"it\'s"'
    assert literal(plain.encode({"a": [1, (2.5, None)]})) == "{'a': [1, (2.5, None)]}"
    assert literal(plain.encode(float("nan"))) is None  # no literal writes nan
    assert literal(plain.encode(float("inf"))) is None
    assert literal(plain.encode({1, 2})) is None  # `set` may be shadowed: not a literal
    assert literal(plain.encode("x" * 500)) is None  # too long
    assert literal({"t": "object", "v": "Thing"}) is None
    bodies = [p.body for p in constant_programs([_returned([]), _returned([])])]
    assert bodies == ["return []"]


def test_the_first_argument_has_the_lower_floor_the_other_families_the_constants() -> None:
    assert floor("return a") == floor("return None") == floor("raise ValueError") == MAX_BASELINE
    for name in ("return parameter low", "return empty x", "return constant 0"):
        assert floor(name) == floor(f"visible calls, else {name}") == MAX_CONSTANT_BASELINE
    high = Baseline(
        raw_reward=0.95,
        programs=(DegenerateScore(program="return parameter low", raw_reward=0.95),),
    )
    assert too_weak(high) == "a degenerate program (a parameter) scores 0.9 or more"


def test_a_body_of_one_trivial_statement_is_told() -> None:
    assert trivial_statement(b"return value\n") == "return value"
    assert trivial_statement(b"    return self\n") == "return self"
    assert trivial_statement(b"return\n") == "return"
    assert trivial_statement(b"return {'a': (1, None)}\n") == "return {'a': (1, None)}"
    assert trivial_statement(b"pass\n") == "pass"
    assert trivial_statement(b"...\n") == "..."
    assert trivial_statement(b"raise NotImplementedError('abstract')\n") is not None
    assert trivial_statement(b"return value.strip()\n") is None
    assert trivial_statement(b"raise ValueError\n") is None
    assert trivial_statement(b"x = 1\nreturn x\n") is None
    assert trivial_statement(b"return [value]\n") is None  # not a literal: builds from the call
    assert trivial_statement(b"return (\n") is None
