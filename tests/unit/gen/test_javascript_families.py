"""The degenerate programs of a JavaScript/TypeScript task (`gen/javascript_families.py`): the
parameters read from the target's definition, the throws, identities and constants built from
the stored outcomes, the literals they write, the file a program is graded as; and the drop
decided on a baseline (`gen/javascript_baseline.judged`) with Python's reasons."""

from __future__ import annotations

from collections.abc import Sequence

from replicate.core import Baseline, DegenerateScore, DropReason, Target
from replicate.gen import javascript_families as families
from replicate.gen.baseline import VISIBLE, floor
from replicate.gen.families import CONSTANTS
from replicate.gen.javascript_baseline import judged
from replicate.grading import MAX_BASELINE, MAX_CONSTANT_BASELINE
from replicate.jail.node import NodeOutcome, Status, Thrown
from replicate.languages.javascript_extract import extract_targets, parse_source
from replicate.languages.javascript_splice import stub_source
from replicate.values import javascript as js

SOURCE = b"""'use strict';
function plural(ms, msAbs, n = 1, ...rest) { return ms + n; }
const first = x => x;
const pick = ({ a }, [b], c) => c;
class Box {
  get(key, fallback) { return this.items[key] || fallback; }
}
module.exports = { plural, first, pick, Box };
"""
TYPED = b"export function clamp(x: number, lo?: number, hi: number = 9): number { return x; }\n"


def _targets(source: bytes, path: str = "index.js") -> dict[str, Target]:
    found = extract_targets(source, parse_source(source, path), path)
    return {t.qualname: t for t in found}


def _returned(value: js.JsValue) -> NodeOutcome:
    return NodeOutcome(Status.RETURNED, value=value)


def _thrown(kind: str, message: str) -> NodeOutcome:
    return NodeOutcome(Status.RAISED, thrown=Thrown(kind, message))


def test_parameters_are_read_from_the_definition() -> None:
    targets = _targets(SOURCE)
    names = {q: families.parameter_names(SOURCE, t) for q, t in targets.items()}
    # a default keeps its name; rest and destructuring patterns hold no one value of the caller's
    assert names["plural"] == ("ms", "msAbs", "n")
    assert names["first"] == ("x",)
    assert names["pick"] == ("c",)
    assert names["Box.get"] == ("key", "fallback")
    (clamp,) = _targets(TYPED, "index.ts").values()
    assert families.parameter_names(TYPED, clamp) == ("x", "lo", "hi")


def test_identities_name_the_first_argument_and_a_methods_this() -> None:
    targets = _targets(SOURCE)
    plural = families.identities(targets["plural"], ("ms", "msAbs"))
    assert [(p.name, p.body) for p in plural] == [
        ("return ms", "return ms;"),
        ("return parameter msAbs", "return msAbs;"),
    ]
    method = families.identities(targets["Box.get"], ("key",))
    assert [p.name for p in method] == ["return key", "return parameter this"]
    assert method[-1].body == "return this;"
    # the first argument is held to None's floor, the others and `this` to the constants'
    assert [floor(p.name) for p in method] == [MAX_BASELINE, MAX_CONSTANT_BASELINE]


def test_throws_are_the_errors_the_reference_throws_most() -> None:
    expected = [_thrown("TypeError", "bad"), _thrown("TypeError", "bad"), _thrown("MyError", "x")]
    programs = families.throws([*expected, _returned(js.ZERO)])
    assert [p.body for p in programs] == [
        'throw new TypeError("bad");',
        'throw new Error("x");',  # a class of the library's own: a plain Error of its message
    ]
    assert [p.body for p in families.throws([_returned(js.ZERO)])] == ['throw new Error("");']


def test_constants_are_the_common_values_and_the_empty_one() -> None:
    one, two = js.Num.of(1.0), js.Num.of(2.0)
    expected = [_returned(v) for v in (one, one, two, "a", one)]
    assert families.common_values(expected) == [one, two, "a", js.ZERO]  # the number kind's 0
    many = [_returned(js.Num.of(float(n))) for n in range(1, 10)]
    assert len(families.common_values(many)) == CONSTANTS + 1
    bodies = [p.body for p in families.constants(expected)]
    assert bodies == ["return 1.0;", "return 2.0;", 'return "a";', "return 0;"]
    assert all(floor(p.name) == MAX_CONSTANT_BASELINE for p in families.constants(expected))


def test_literals_write_what_reads_back_and_nothing_else() -> None:
    cases: Sequence[tuple[js.JsValue, str | None]] = [
        (js.Undefined(), "undefined"),
        (js.Null(), "null"),
        (True, "true"),
        ('a"b\n', '"a\\"b\\n"'),
        (js.Num.of(float("nan")), "NaN"),
        (js.Num.of(float("-inf")), "-Infinity"),
        (js.Num.of(-0.0), "-0"),
        (js.Num.of(0.5), "0.5"),
        (js.BigInt(12), "12n"),
        (js.Array((js.Num.of(1.0), "x")), '[1.0, "x"]'),
        (js.PlainObject((("a b", js.Null()),)), '({"a b": null})'),
        (js.PlainObject((("__proto__", js.Null()),)), None),  # would set the prototype
        (js.PlainObject((), null_proto=True), None),
        (js.Array((js.Date(js.ZERO),)), None),
        (js.JsMap(()), None),
    ]
    for value, text in cases:
        assert families.literal(value) == text, value


def test_programs_are_each_once_and_a_file_each() -> None:
    target = _targets(SOURCE)["first"]
    expected = [_returned(js.Undefined()), _returned(js.Undefined())]
    programs = families.programs(target, ("x",), expected)
    bodies = [p.body for p in programs]
    assert len(bodies) == len(set(bodies))
    assert bodies[:3] == ["return undefined;", 'throw new Error("");', "return x;"]
    stubbed = stub_source(SOURCE, target)
    made = families.program_file(stubbed, target, "return x;")
    assert b"const first = x => { return x; };" in made
    assert made.replace(b"{ return x; }", b"x") == SOURCE


def _baseline(*scores: tuple[str, float]) -> Baseline:
    ranked = sorted(scores, key=lambda s: -s[1])
    programs = tuple(DegenerateScore(program=p, raw_reward=r) for p, r in ranked)
    return Baseline(raw_reward=ranked[0][1], programs=programs)


def test_a_baseline_drops_the_task_with_pythons_reasons() -> None:
    fine = _baseline(("return undefined", 0.1), (f"{VISIBLE} return undefined", 0.34))
    assert judged(fine, 30) is None
    at_floor = judged(_baseline((f"{VISIBLE} return x", 0.5)), 30)
    assert at_floor is not None and at_floor.reason.startswith("a degenerate program")
    assert "scores 0.5 or more" in at_floor.reason and "return x" in at_floor.detail
    constant = _baseline(("return constant false", 0.85), (f"{VISIBLE} return constant 0", 0.9))
    dropped = judged(constant, 30)
    assert dropped is not None and "scores 0.9 or more" in dropped.reason
    assert judged(_baseline(("return constant false", 0.85)), 30) is None  # under its floor
    same = judged(_baseline(("return parameter this", 1.0)), 30)
    assert same is not None and same.reason == DropReason.DEGENERATE_ORIGINAL
    assert "all 30 inputs" in same.detail
