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
from typing import Any

from replicate.values.javascript_records import (
    MAX_DEPTH as MAX_DEPTH,
)
from replicate.values.javascript_records import (
    MAX_DIGITS as MAX_DIGITS,
)
from replicate.values.javascript_records import (
    TYPED_KINDS as TYPED_KINDS,
)
from replicate.values.javascript_records import (
    ZERO as ZERO,
)
from replicate.values.javascript_records import (
    Answer as Answer,
)
from replicate.values.javascript_records import (
    Array as Array,
)
from replicate.values.javascript_records import (
    BigInt as BigInt,
)
from replicate.values.javascript_records import (
    Buffer as Buffer,
)
from replicate.values.javascript_records import (
    Cut as Cut,
)
from replicate.values.javascript_records import (
    Date as Date,
)
from replicate.values.javascript_records import (
    ErrorValue as ErrorValue,
)
from replicate.values.javascript_records import (
    Fields as Fields,
)
from replicate.values.javascript_records import (
    Function as Function,
)
from replicate.values.javascript_records import (
    Getter as Getter,
)
from replicate.values.javascript_records import (
    Hole as Hole,
)
from replicate.values.javascript_records import (
    Instance as Instance,
)
from replicate.values.javascript_records import (
    JsMap as JsMap,
)
from replicate.values.javascript_records import (
    JsSet as JsSet,
)
from replicate.values.javascript_records import (
    JsValue as JsValue,
)
from replicate.values.javascript_records import (
    NotJsValue as NotJsValue,
)
from replicate.values.javascript_records import (
    Null as Null,
)
from replicate.values.javascript_records import (
    Num as Num,
)
from replicate.values.javascript_records import (
    Opaque as Opaque,
)
from replicate.values.javascript_records import (
    PlainObject as PlainObject,
)
from replicate.values.javascript_records import (
    Ref as Ref,
)
from replicate.values.javascript_records import (
    RegExp as RegExp,
)
from replicate.values.javascript_records import (
    Settled as Settled,
)
from replicate.values.javascript_records import (
    Symbol as Symbol,
)
from replicate.values.javascript_records import (
    Typed as Typed,
)
from replicate.values.javascript_records import (
    Undefined as Undefined,
)
from replicate.values.javascript_records import (
    fields as fields,
)
from replicate.values.javascript_records import (
    js_map as js_map,
)
from replicate.values.javascript_records import (
    js_set as js_set,
)
from replicate.values.tagged import read_node

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
