"""The degenerate programs a JavaScript/TypeScript task is graded against at gen, as a Python
task's (`gen.families`), each a body of one statement an agent could write without reading the
task (pure: the programs' text; `gen.javascript_baseline` runs and grades them):

- ``return undefined;`` (JavaScript's None);
- ``throw new <T>(<message>)`` for the thrown errors the reference throws most often (its class
  when it is one of JavaScript's own error classes, `ERROR_CLASSES`, else `Error`), and
  ``throw new Error("")`` when it throws none;
- the **identity** on each named parameter (``return <first>``, then ``return parameter <p>``
  for the others) and, for a method, ``return this`` (named ``return parameter this``: like
  Python's ``self``, held to the constants' floor);
- **constants**: the `families.CONSTANTS` values the reference returns most often, and the
  empty value of the kind it returns most often ('' for strings, 0 for numbers, [] for arrays,
  {} for objects, false for booleans), each written as a JavaScript literal where one reads
  back as the same value (`literal`).

Their names start as Python's do, so `gen.baseline.floor` holds each to the floor of its kind.
The stub's own throw is not among them: the inputs its outcome matches were taken out of the
task at gen.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence

from tree_sitter import Node

from replicate.core import Target
from replicate.gen.families import CONSTANT, CONSTANTS, IDENTITY, MAX_LITERAL, Program
from replicate.jail import node
from replicate.languages import javascript_extract, javascript_splice
from replicate.values import javascript as js
from replicate.values import javascript_text

THIS = "this"
UNDEFINED = "return undefined"
ERROR_CLASSES = frozenset(
    {"Error", "TypeError", "RangeError", "SyntaxError", "ReferenceError", "URIError", "EvalError"}
)
# The empty value of a returned value's kind, as a literal
EMPTY_BY_KIND: dict[type, js.JsValue] = {
    str: "",
    js.Num: js.ZERO,
    js.Array: js.Array(()),
    js.PlainObject: js.PlainObject(()),
    bool: False,
}
_PARAMETER_TYPES = frozenset({"required_parameter", "optional_parameter"})  # TypeScript's


def parameter_names(source: bytes, target: Target) -> tuple[str, ...]:
    """The target's named parameters, in order (a default's name kept; rest and destructuring
    patterns left out: no one value of the caller's); () when the target is not found."""
    tree = javascript_extract.parse_source(source, target.path)
    for found, function in javascript_extract.located_targets(source, tree, target.path):
        if (found.qualname, found.body_span) == (target.qualname, target.body_span):
            return _names(function)
    return ()


def _names(function: Node) -> tuple[str, ...]:
    single = function.child_by_field_name("parameter")  # an arrow's `x => ...`
    if single is not None:
        return (_text(single),) if single.type == "identifier" else ()
    params = function.child_by_field_name("parameters")
    found = [_name(p) for p in (params.named_children if params is not None else ())]
    return tuple(name for name in found if name)


def _name(param: Node) -> str | None:
    if param.type in _PARAMETER_TYPES:
        pattern = param.child_by_field_name("pattern")
        return _name(pattern) if pattern is not None else None
    if param.type == "assignment_pattern":
        left = param.child_by_field_name("left")
        return _name(left) if left is not None else None
    return _text(param) if param.type == "identifier" else None


def _text(item: Node) -> str:
    return (item.text or b"").decode("utf-8")


def identities(target: Target, names: Sequence[str]) -> list[Program]:
    """``return <p>`` for each named parameter, the first one's named as itself; then, for a
    method, ``return this``."""
    found = [Program(f"return {name}", f"return {name};") for name in names[:1]]
    found += [Program(f"{IDENTITY} {name}", f"return {name};") for name in names[1:]]
    if target.kind == "method":
        found.append(Program(f"{IDENTITY} {THIS}", "return this;"))
    return found


def throws(expected: Iterable[node.NodeOutcome]) -> list[Program]:
    """A throw of each of the errors the reference throws most often (class and message), or of
    a plain ``Error`` with no message when it throws none."""
    counts: Counter[tuple[str, str]] = Counter(
        (o.thrown.type if o.thrown.type in ERROR_CLASSES else "Error", o.thrown.message)
        for o in expected
        if o.status is node.Status.RAISED and o.thrown is not None
    )
    common = [pair for pair, _ in counts.most_common(CONSTANTS)] or [("Error", "")]
    found = []
    for kind, message in common:
        text = json.dumps(message[:MAX_LITERAL])
        name = f"throw {kind}({text[:60]})"
        found.append(Program(name, f"throw new {kind}({text});"))
    return found


def common_values(expected: Iterable[node.NodeOutcome]) -> list[js.JsValue]:
    """The constants: the `CONSTANTS` most common returned values (most common first), then the
    empty value of the kind returned most often (`EMPTY_BY_KIND`), if not among them."""
    counts: Counter[str] = Counter()
    first: dict[str, js.JsValue] = {}
    kinds: Counter[type] = Counter()
    for outcome in expected:
        if outcome.status is not node.Status.RETURNED or outcome.value is None:
            continue
        key = json.dumps(js.encode(outcome.value), sort_keys=True)
        counts[key] += 1
        first.setdefault(key, outcome.value)
        if type(outcome.value) in EMPTY_BY_KIND:
            kinds[type(outcome.value)] += 1
    found = [first[key] for key, _ in counts.most_common(CONSTANTS)]
    if kinds:
        empty = EMPTY_BY_KIND[kinds.most_common(1)[0][0]]
        found += [] if empty in found else [empty]
    return found


def constants(expected: Iterable[node.NodeOutcome]) -> list[Program]:
    """``return <literal>`` for each constant a short literal writes."""
    found = []
    for value in common_values(expected):
        text = literal(value)
        if text is not None and len(text) <= MAX_LITERAL:
            name = f"{CONSTANT} {javascript_text.render(value, 60)}"
            found.append(Program(name, f"return {text};"))
    return found


def literal(value: js.JsValue) -> str | None:
    """JavaScript source that evaluates to `value`: undefined, null, booleans, numbers (NaN,
    the infinities and -0 included), BigInts, strings, and arrays and plain objects of them;
    None for any other value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, js.Undefined):
        return "undefined"
    if isinstance(value, js.Null):
        return "null"
    if isinstance(value, js.BigInt):
        return f"{value.value}n"
    if isinstance(value, js.Num):
        return js.number_text(value.value)  # reads back as the same number
    if isinstance(value, js.Array):
        items = [literal(item) for item in value.items]
        return None if None in items else "[" + ", ".join(items) + "]"  # type: ignore[arg-type]
    if isinstance(value, js.PlainObject) and not value.null_proto:
        pairs = [(json.dumps(k), literal(v)) for k, v in value.fields]
        if any(text is None for _, text in pairs) or any(k == '"__proto__"' for k, _ in pairs):
            return None
        return "({" + ", ".join(f"{k}: {v}" for k, v in pairs) + "})"
    return None


def programs(
    target: Target, names: Sequence[str], expected: Sequence[node.NodeOutcome]
) -> list[Program]:
    """Every degenerate program of the task, each once (by body)."""
    every = [
        Program(UNDEFINED, "return undefined;"),
        *throws(expected),
        *identities(target, names),
        *constants(expected),
    ]
    return list({p.body: p for p in every}.values())


def program_file(stubbed: bytes, target: Target, body: str) -> bytes:
    """The stubbed file with the stub's block replaced by `{ body }`, as a candidate's body
    would be spliced in."""
    start = target.body_span.start_byte
    if stubbed[start : start + len(javascript_splice.STUB_BODY)] != javascript_splice.STUB_BODY:
        raise ValueError("the stubbed file does not hold the target's stub")
    block = ("{ " + body + " }").encode("utf-8")
    return stubbed[:start] + block + stubbed[start + len(javascript_splice.STUB_BODY) :]
