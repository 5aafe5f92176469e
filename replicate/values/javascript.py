"""JavaScript values as the Node runner tags them (`replicate/jail/runner_js/values.cjs`), read on
the trusted side as frozen records and written back (pure: JSON in, records out).

Equality of records is `assert.deepStrictEqual`'s equality of the JavaScript values, which is how a
repository's own tests compare them: numbers by `Object.is` (NaN equals NaN, -0 is apart from 0),
BigInt apart from number, undefined apart from null and from a hole in an array; objects,
instances and errors by their class and own enumerable string-keyed fields in any order; Map
and Set by their entries in any order; Date by its time, RegExp by source, flags and lastIndex,
typed arrays by kind and items. Two departures, since identity does not cross processes: a
function equals a function of the same name, a symbol a symbol of the same description; and one
for NaN's sake: an Invalid Date equals an Invalid Date, as NaN equals NaN (Node says not). A
cycle is a `Ref` to the container it repeats, counted in levels up, so equal graphs read equal;
past the runner's depth or size bound a value is a `Cut`.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from replicate.values.tagged import read_node

MAX_DEPTH = 64
MAX_DIGITS = 4000
TYPED_KINDS = frozenset(
    {
        "Int8Array",
        "Uint8Array",
        "Uint8ClampedArray",
        "Int16Array",
        "Uint16Array",
        "Int32Array",
        "Uint32Array",
        "Float32Array",
        "Float64Array",
        "BigInt64Array",
        "BigUint64Array",
    }
)


class NotJsValue(ValueError):
    """A tagged node that is not one of the runner's."""


@dataclass(frozen=True)
class Undefined:
    pass


@dataclass(frozen=True)
class Null:
    pass


@dataclass(frozen=True)
class Hole:
    """An array index with no property (`[, 1]`), apart from one holding undefined."""


@dataclass(frozen=True)
class Num:
    """A number by its exact bits' hex text: NaN is one value, -0 another than 0."""

    hex: str

    @classmethod
    def of(cls, value: float) -> Num:
        value = float(value)
        return cls("nan" if math.isnan(value) else float.hex(value))

    @property
    def value(self) -> float:
        return float.fromhex(self.hex)


ZERO = Num("0x0.0p+0")


@dataclass(frozen=True)
class BigInt:
    value: int


@dataclass(frozen=True)
class Symbol:
    description: str | None


@dataclass(frozen=True)
class Function:
    """A function, by its own name; as a call's argument the recorder saw the target call, also
    `answers`: each call the target made to it while the tests ran, with what it gave back,
    which the runner's rebuilt function answers again (None: not recorded, calling it throws).
    Two functions are equal by name: the answers are what a replay needs, not what it compares."""

    name: str
    answers: tuple[Answer, ...] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Answer:
    """One call a function argument answered: its arguments, and the value it returned or the
    error it threw (exactly one of the two)."""

    args: tuple[JsValue, ...]
    value: JsValue | None = None
    error: JsValue | None = None


@dataclass(frozen=True)
class Array:
    items: tuple[JsValue, ...]


Fields = tuple[tuple[str, "JsValue"], ...]  # sorted by key


@dataclass(frozen=True)
class PlainObject:
    fields: Fields
    null_proto: bool = False


@dataclass(frozen=True)
class Instance:
    class_name: str
    fields: Fields


@dataclass(frozen=True)
class ErrorValue:
    class_name: str
    message: str
    fields: Fields = ()


@dataclass(frozen=True)
class JsMap:
    entries: tuple[tuple[JsValue, JsValue], ...]  # sorted: order is not compared


@dataclass(frozen=True)
class JsSet:
    items: tuple[JsValue, ...]  # sorted


@dataclass(frozen=True)
class Date:
    time: Num


@dataclass(frozen=True)
class RegExp:
    source: str
    flags: str
    last_index: Num = ZERO


@dataclass(frozen=True)
class Typed:
    kind: str
    items: tuple[Num | BigInt, ...]


@dataclass(frozen=True)
class Buffer:
    data: bytes


@dataclass(frozen=True)
class Settled:
    """A returned promise, awaited: what it fulfilled with."""

    value: JsValue


@dataclass(frozen=True)
class Getter:
    """An accessor property: the runner never calls it."""


@dataclass(frozen=True)
class Opaque:
    kind: str  # Proxy, Promise (inside a value), WeakMap, WeakSet, DataView...


@dataclass(frozen=True)
class Ref:
    up: int  # levels up to the container this one repeats


@dataclass(frozen=True)
class Cut:
    reason: str  # "depth" or "size"


JsValue: TypeAlias = (
    bool
    | str
    | Undefined
    | Null
    | Hole
    | Num
    | BigInt
    | Symbol
    | Function
    | Array
    | PlainObject
    | Instance
    | ErrorValue
    | JsMap
    | JsSet
    | Date
    | RegExp
    | Typed
    | Buffer
    | Settled
    | Getter
    | Opaque
    | Ref
    | Cut
)


def fields(pairs: Mapping[str, JsValue]) -> Fields:
    """Own fields in canonical (key) order."""
    return tuple(sorted(pairs.items()))


def js_set(items: tuple[JsValue, ...]) -> JsSet:
    return JsSet(tuple(sorted(items, key=repr)))


def js_map(entries: tuple[tuple[JsValue, JsValue], ...]) -> JsMap:
    return JsMap(tuple(sorted(entries, key=repr)))


# ---------------------------------------------------------------- numbers as the runner writes


def number_text(value: float) -> str:
    """The runner's text of a number: NaN, -0, Infinity, -Infinity or a decimal that reads back."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    return repr(float(value))


def read_number(text: Any) -> Num:
    if not isinstance(text, str) or len(text) > 64:
        raise NotJsValue("a number's text")
    try:
        return Num.of(float(text))  # NaN, Infinity, -Infinity and -0 read as JS writes them
    except ValueError:
        raise NotJsValue(f"not a number: {text!r}") from None


def _bigint(text: Any) -> BigInt:
    if not isinstance(text, str) or len(text) > MAX_DIGITS or not text.lstrip("-").isdigit():
        raise NotJsValue("a BigInt's text")
    return BigInt(int(text))


# ---------------------------------------------------------------- decoding


def decode(node: Any, depth: int = 0) -> JsValue:
    """The record a tagged node stands for; `NotJsValue` for a malformed or unknown one."""
    return read_node(node, depth, _READERS, max_depth=MAX_DEPTH, error=NotJsValue)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise NotJsValue("not a string")
    return value


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise NotJsValue("not a list")
    return value


def _pairs(node: Mapping[str, Any], depth: int) -> list[tuple[JsValue, JsValue]]:
    return [(decode(k, depth), decode(v, depth)) for k, v in _list(node["v"])]


def _fields(node: Mapping[str, Any], depth: int) -> Fields:
    pairs = {_text(k): decode(v, depth) for k, v in _list(node["v"])}
    if len(pairs) != len(node["v"]):
        raise NotJsValue("a key twice")
    return fields(pairs)


def _typed(node: Mapping[str, Any], depth: int) -> Typed:
    kind = _text(node["kind"])
    if kind not in TYPED_KINDS:
        raise NotJsValue(f"unknown typed array {kind!r}")
    read = _bigint if kind.startswith("Big") else read_number
    return Typed(kind, tuple(read(item) for item in _list(node["v"])))


def _answers(node: Mapping[str, Any], depth: int) -> tuple[Answer, ...] | None:
    """A function argument's recorded answers (`Function.answers`), if it has them."""
    if "answers" not in node:
        return None
    found = []
    for item in _list(node["answers"]):
        if not isinstance(item, dict) or ("value" in item) == ("error" in item):
            raise NotJsValue("an answer holds a value or an error")
        args = tuple(decode(a, depth) for a in _list(item["args"]))
        if "value" in item:
            found.append(Answer(args, value=decode(item["value"], depth)))
        else:
            found.append(Answer(args, error=decode(item["error"], depth)))
    return tuple(found)


def _write_function(value: Function) -> dict[str, Any]:
    node: dict[str, Any] = {"t": "function", "v": value.name}
    if value.answers is not None:
        node["answers"] = [_write_answer(a) for a in value.answers]
    return node


def _write_answer(answer: Answer) -> dict[str, Any]:
    args = [encode(a) for a in answer.args]
    if answer.error is not None:
        return {"args": args, "error": encode(answer.error)}
    value = answer.value if answer.value is not None else Undefined()
    return {"args": args, "value": encode(value)}


def _ref(node: Mapping[str, Any], depth: int) -> Ref:
    up = node["v"]
    if type(up) is not int or not 1 <= up < depth:
        raise NotJsValue("a ref past the outermost value")
    return Ref(up)


_Reader = Callable[[Mapping[str, Any], int], JsValue]
_READERS: dict[str, _Reader] = {
    "undefined": lambda node, depth: Undefined(),
    "null": lambda node, depth: Null(),
    "hole": lambda node, depth: Hole(),
    "bool": lambda node, depth: node["v"] is True,
    "num": lambda node, depth: read_number(node["v"]),
    "bigint": lambda node, depth: _bigint(node["v"]),
    "str": lambda node, depth: _text(node["v"]),
    "symbol": lambda node, depth: Symbol(None if node["v"] is None else _text(node["v"])),
    "function": lambda node, depth: Function(_text(node["v"]), _answers(node, depth)),
    "array": lambda node, depth: Array(tuple(decode(i, depth) for i in _list(node["v"]))),
    "object": lambda node, depth: PlainObject(_fields(node, depth), node.get("null_proto") is True),
    "instance": lambda node, depth: Instance(_text(node["class"]), _fields(node, depth)),
    "error": lambda node, depth: ErrorValue(
        _text(node["class"]), _text(node["message"]), _fields(node, depth)
    ),
    "map": lambda node, depth: js_map(tuple(_pairs(node, depth))),
    "set": lambda node, depth: js_set(tuple(decode(i, depth) for i in _list(node["v"]))),
    "date": lambda node, depth: Date(read_number(node["v"])),
    "regexp": lambda node, depth: RegExp(
        _text(node["source"]), _text(node["flags"]), read_number(node["last_index"])
    ),
    "typed": _typed,
    "buffer": lambda node, depth: Buffer(base64.b64decode(_text(node["v"]), validate=True)),
    "promise": lambda node, depth: Settled(decode(node["v"], depth)),
    "getter": lambda node, depth: Getter(),
    "opaque": lambda node, depth: Opaque(_text(node["v"])),
    "ref": _ref,
    "cut": lambda node, depth: Cut(_text(node["v"])),
}
TAGS = frozenset(_READERS)  # every tag the runner writes (values.cjs, main.cjs)


# ---------------------------------------------------------------- encoding


def encode(value: JsValue) -> dict[str, Any]:
    """The runner's tagged node of a record (the inverse of `decode`)."""
    if isinstance(value, bool):
        return {"t": "bool", "v": value}
    if isinstance(value, str):
        return {"t": "str", "v": value}
    writer = _WRITERS.get(type(value))
    if writer is None:
        raise NotJsValue(f"not a JavaScript value record: {type(value).__name__}")
    return writer(value)


def _write_fields(pairs: Fields) -> list[list[Any]]:
    return [[key, encode(item)] for key, item in pairs]


def _write_object(value: PlainObject) -> dict[str, Any]:
    node: dict[str, Any] = {"t": "object", "v": _write_fields(value.fields)}
    if value.null_proto:
        node["null_proto"] = True
    return node


def _write_typed(value: Typed) -> dict[str, Any]:
    items = [str(i.value) if isinstance(i, BigInt) else number_text(i.value) for i in value.items]
    return {"t": "typed", "kind": value.kind, "v": items}


_WRITERS: dict[type, Callable[[Any], dict[str, Any]]] = {
    Undefined: lambda v: {"t": "undefined"},
    Null: lambda v: {"t": "null"},
    Hole: lambda v: {"t": "hole"},
    Num: lambda v: {"t": "num", "v": number_text(v.value)},
    BigInt: lambda v: {"t": "bigint", "v": str(v.value)},
    Symbol: lambda v: {"t": "symbol", "v": v.description},
    Function: lambda v: _write_function(v),
    Array: lambda v: {"t": "array", "v": [encode(i) for i in v.items]},
    PlainObject: _write_object,
    Instance: lambda v: {"t": "instance", "class": v.class_name, "v": _write_fields(v.fields)},
    ErrorValue: lambda v: {
        "t": "error",
        "class": v.class_name,
        "message": v.message,
        "v": _write_fields(v.fields),
    },
    JsMap: lambda v: {"t": "map", "v": [[encode(k), encode(i)] for k, i in v.entries]},
    JsSet: lambda v: {"t": "set", "v": [encode(i) for i in v.items]},
    Date: lambda v: {"t": "date", "v": number_text(v.time.value)},
    RegExp: lambda v: {
        "t": "regexp",
        "source": v.source,
        "flags": v.flags,
        "last_index": number_text(v.last_index.value),
    },
    Typed: _write_typed,
    Buffer: lambda v: {"t": "buffer", "v": base64.b64encode(v.data).decode("ascii")},
    Settled: lambda v: {"t": "promise", "v": encode(v.value)},
    Getter: lambda v: {"t": "getter"},
    Opaque: lambda v: {"t": "opaque", "v": v.kind},
    Ref: lambda v: {"t": "ref", "v": v.up},
    Cut: lambda v: {"t": "cut", "v": v.reason},
}
