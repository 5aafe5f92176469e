"""Short JavaScript-like text of JavaScript value records (`values.javascript`), for
counterexamples: what Node's `util.inspect` would show, cut at a limit (pure)."""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Callable
from typing import Any

from replicate.values import javascript as js

_IDENTIFIER = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$0123456789")


def render(value: js.JsValue, limit: int = 200) -> str:
    """`value` as JavaScript-like text, cut to about `limit` characters."""
    text = _text(value, limit)
    return text if len(text) <= limit else text[:limit] + "..."


def call_text(name: str, args: tuple[js.JsValue, ...], this: js.JsValue | None = None) -> str:
    """A call as a counterexample shows it: `name(args)`, or `this.name(args)` for a method."""
    shown = ", ".join(render(a, 60) for a in args)
    head = name if this is None else f"{render(this, 60)}.{name}"
    return f"{head}({shown})"[:300]


def number(value: float) -> str:
    if math.isnan(value) or math.isinf(value) or value == 0:
        return js.number_text(value)
    return repr(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)


def _key(key: str) -> str:
    plain = key and not key[0].isdigit() and set(key) <= _IDENTIFIER
    return key if plain else json.dumps(key)


def _items(parts: Any, limit: int) -> str:
    out: list[str] = []
    used = 0
    for part in parts:
        if used > limit:
            out.append("...")
            break
        out.append(part)
        used += len(part) + 2
    return ", ".join(out)


def _fields(fields: js.Fields, limit: int) -> str:
    inner = _items((f"{_key(k)}: {_text(v, limit)}" for k, v in fields), limit)
    return "{" + (f" {inner} " if inner else "") + "}"


def _date(value: js.Date) -> str:
    ms = value.time.value
    if math.isnan(ms):
        return "Invalid Date"
    try:
        at = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms)
    except OverflowError:
        return f"Date({number(ms)})"
    return at.isoformat(timespec="milliseconds") + "Z"


_RENDER: dict[type, Callable[[Any, int], str]] = {
    js.Undefined: lambda v, n: "undefined",
    js.Null: lambda v, n: "null",
    js.Hole: lambda v, n: "<empty>",
    js.Num: lambda v, n: number(v.value),
    js.BigInt: lambda v, n: f"{v.value}n",
    js.Symbol: lambda v, n: f"Symbol({'' if v.description is None else v.description})",
    js.Function: lambda v, n: f"[Function: {v.name or '(anonymous)'}]",
    js.Array: lambda v, n: "[" + _items((_text(i, n) for i in v.items), n) + "]",
    js.PlainObject: lambda v, n: (
        ("[Object: null prototype] " if v.null_proto else "") + _fields(v.fields, n)
    ),
    js.Instance: lambda v, n: f"{v.class_name} {_fields(v.fields, n)}",
    js.ErrorValue: lambda v, n: f"{v.class_name}({json.dumps(v.message)})",
    js.JsMap: lambda v, n: (
        f"Map({len(v.entries)}) {{"
        + _items((f"{_text(k, n)} => {_text(i, n)}" for k, i in v.entries), n)
        + "}"
    ),
    js.JsSet: lambda v, n: (
        f"Set({len(v.items)}) {{" + _items((_text(i, n) for i in v.items), n) + "}"
    ),
    js.Date: lambda v, n: _date(v),
    js.RegExp: lambda v, n: f"/{v.source}/{v.flags}",
    js.Typed: lambda v, n: (
        f"{v.kind}({len(v.items)}) [" + _items((_text(i, n) for i in v.items), n) + "]"
    ),
    js.Buffer: lambda v, n: f"ArrayBuffer {{ byteLength: {len(v.data)} }}",
    js.Settled: lambda v, n: f"Promise {{ {_text(v.value, n)} }}",
    js.Getter: lambda v, n: "[Getter]",
    js.Opaque: lambda v, n: f"[{v.kind}]",
    js.Ref: lambda v, n: f"[Circular ^{v.up}]",
    js.Cut: lambda v, n: f"[cut: {v.reason}]",
}


def _text(value: js.JsValue, limit: int) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value if len(value) <= limit else value[:limit])
    return _RENDER[type(value)](value, limit)
