"""Simpler JavaScript values than a given one, for shrinking a counterexample (pure).

`simpler(value)` proposes values strictly smaller by `size` (shortlex-like, as hypothesis orders
its shrinks): shorter strings, integers
nearer zero, shorter arrays, fewer fields, elements and fields simplified in place. Values of
other kinds (a Map, a Date, a class instance, a function) are not shrunk. `simpler_calls`
proposes, for a call's arguments, each argument replaced by each of its simpler values.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence

from replicate.values import javascript as js

NESTED = 3  # simpler values proposed for each element or field, in place
POSITIONS = 8  # elements or fields dropped or simplified, the first ones


def size(value: js.JsValue) -> int:
    """How big a value is: a string's length, a number's bits (a sign and a fraction count one
    more each; zero is the smallest), an array's or object's parts; another kind's
    tagged node's length."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        return 1 + len(value)
    if isinstance(value, js.Num | js.BigInt):
        return _number_size(float(value.value))
    if isinstance(value, js.Array):
        return 1 + sum(size(item) for item in value.items)
    if isinstance(value, js.PlainObject):
        return 1 + sum(len(key) + size(item) for key, item in value.fields)
    return len(json.dumps(js.encode(value), sort_keys=True))


def _number_size(number: float) -> int:
    if number == 0:
        return 1
    if not math.isfinite(number):
        return 4
    bits = abs(math.trunc(number)).bit_length()  # halving an integer makes it smaller
    return 2 + bits + (number < 0) + (number != math.trunc(number))


def simpler(value: js.JsValue) -> list[js.JsValue]:
    """Values smaller than `value` by `size`, smallest first, none twice."""
    mine = size(value)
    found = {repr(v): v for v in _proposals(value) if size(v) < mine}
    return sorted(found.values(), key=lambda v: (size(v), repr(v)))


def simpler_args(args: Sequence[js.JsValue]) -> list[tuple[js.JsValue, ...]]:
    """The arguments with one of them replaced by a simpler value, smallest first."""
    out = [
        (*args[:n], smaller, *args[n + 1 :])
        for n, arg in enumerate(args)
        for smaller in simpler(arg)
    ]
    return sorted(out, key=lambda call: (sum(size(a) for a in call), repr(call)))


def _proposals(value: js.JsValue) -> Iterator[js.JsValue]:
    if isinstance(value, bool):
        yield False
    elif isinstance(value, str):
        yield from ("", value[:1], value[: len(value) // 2], value[1:], value[:-1])
    elif isinstance(value, js.Num):
        yield from _numbers(value.value)
    elif isinstance(value, js.BigInt):
        yield from (js.BigInt(0), js.BigInt(int(value.value / 2)))
    elif isinstance(value, js.Array):
        yield from (js.Array(items) for items in _shorter(value.items))
    elif isinstance(value, js.PlainObject):
        yield from (js.PlainObject(f, value.null_proto) for f in _fewer(value.fields))


def _numbers(number: float) -> Iterator[js.JsValue]:
    yield js.Num.of(0.0)
    if not math.isfinite(number):
        return
    yield js.Num.of(abs(number))
    whole = math.trunc(number)
    yield js.Num.of(float(whole))
    yield js.Num.of(math.copysign(1.0, number))
    yield js.Num.of(float(whole - 1 if whole > 0 else whole + 1))
    for shift in range(1, min(abs(whole).bit_length(), 64)):  # every magnitude below, at once
        yield js.Num.of(float(int(whole / 2**shift)))


def _shorter(items: tuple[js.JsValue, ...]) -> Iterator[tuple[js.JsValue, ...]]:
    yield ()
    yield items[: len(items) // 2]
    for n in range(min(len(items), POSITIONS)):
        yield items[:n] + items[n + 1 :]
    for n, item in enumerate(items[:POSITIONS]):
        for smaller in simpler(item)[:NESTED]:
            yield (*items[:n], smaller, *items[n + 1 :])


def _fewer(fields: js.Fields) -> Iterator[js.Fields]:
    yield ()
    for n in range(min(len(fields), POSITIONS)):
        yield fields[:n] + fields[n + 1 :]
    for n, (key, item) in enumerate(fields[:POSITIONS]):
        for smaller in simpler(item)[:NESTED]:
            yield (*fields[:n], (key, smaller), *fields[n + 1 :])
