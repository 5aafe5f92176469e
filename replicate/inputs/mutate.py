"""Type-aware mutation of traced values (EvalPlus style) and boundary values, on plain values.

`mutate` changes one traced value a little, keeping its type: an int moves by one, doubles,
halves or changes sign; a string gets a token from the ingredient pool (every leaf value seen in
the traced calls and the doctests) spliced in, or loses or repeats a piece; a list loses, repeats
or inserts an element, or one element is mutated in turn; a tuple keeps its arity.  `boundaries`
lists the edge cases of a value's type: empty, zero, -1, large, unicode, NaN, ±inf, -0.0.
Pure and deterministic given the `random.Random` passed in.
"""

from __future__ import annotations

import contextlib
import math
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from replicate.values import Items

LONG = 50  # items in the "long" boundary container
_TOKENS = re.compile(r"[A-Za-z]+|[0-9]+|\s+|[^A-Za-z0-9\s]")
_EDGE_INTS = (0, 1, -1, 2**31 - 1, -(2**31))
_EDGE_FLOATS = (0.0, -0.0, math.nan, math.inf, -math.inf, 0.1, 1e300)
_EDGE_STRS = ("", " ", "\u00e9t\u00e9", "\u00df", "\u0130", "\u65e5\u672c", "\U0001f600", "a\x00b")
_EDGE_BYTES = (b"", b"\x00", b"\xff\xfe\x80")
# Characters that make text functions work (quote, escape, split, strip, case): spliced into
# strings now and then, so that a function is seldom the identity on the widened strings.
SPECIAL = (
    " ",
    "  ",
    "\t",
    "\n",
    "%",
    "/",
    "\\",
    "&",
    "#",
    "?",
    "=",
    ":",
    "@",
    "'",
    '"',
    "<",
    ">",
    ".",
    ",",
    "-",
    "_",
    "A",
    "z",
    "0",
    "9",
    "\u00e9",
    "\u00df",
    "\u2603",
)


@dataclass(frozen=True)
class Pool:
    """Leaf values seen in the traced calls and doctests, to splice into mutants."""

    ints: tuple[int, ...] = ()
    floats: tuple[float, ...] = ()
    strings: tuple[str, ...] = ()
    blobs: tuple[bytes, ...] = ()


def pool_of(values: Iterable[Any], limit: int = 200) -> Pool:
    ints: dict[int, None] = {}
    floats: dict[float, None] = {}
    strings: dict[str, None] = {}
    blobs: dict[bytes, None] = {}
    stack = list(values)
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is int and abs(value) < 2**63:
            ints[value] = None
        elif kind is float and math.isfinite(value):
            floats[value] = None
        elif kind is str and len(value) <= 200:
            strings[value] = None
            strings.update(dict.fromkeys(_TOKENS.findall(value)))
        elif kind is bytes and len(value) <= 200:
            blobs[value] = None
        elif kind in (list, tuple, set, frozenset):
            stack.extend(value)
        elif kind is Items:
            stack.extend(value.items)
        elif kind is slice:
            stack.extend((value.start, value.stop, value.step))
        elif kind is dict:
            stack.extend(value.keys())
            stack.extend(value.values())
    return Pool(
        tuple(sorted(ints)[:limit]),
        tuple(sorted(floats)[:limit]),
        tuple(sorted(strings)[:limit]),
        tuple(sorted(blobs)[:limit]),
    )


def mutate(value: Any, rng: random.Random, pool: Pool, depth: int = 0) -> Any:
    """A value of the same type as `value`, a small step away from it (maybe equal to it)."""
    mutator = _MUTATORS.get(type(value))
    if mutator is None or depth > 6:
        return value
    return mutator(value, rng, pool, depth)


def _bool(value: bool, rng: random.Random, pool: Pool, depth: int) -> bool:
    return not value


def _int(value: int, rng: random.Random, pool: Pool, depth: int) -> int:
    options = [value + 1, value - 1, -value, value * 2, value // 2, 0]
    options += [rng.choice(pool.ints)] if pool.ints else []
    return rng.choice(options)


def _float(value: float, rng: random.Random, pool: Pool, depth: int) -> float:
    if not math.isfinite(value):
        return rng.choice(pool.floats) if pool.floats else 1.0
    options = [value + 1.0, value - 1.0, -value, value * 2, value / 2]
    options += [rng.choice(pool.floats)] if pool.floats else []
    return rng.choice(options)


def _str(value: str, rng: random.Random, pool: Pool, depth: int) -> str:
    at = rng.randint(0, len(value))
    token = rng.choice(pool.strings) if pool.strings and rng.random() < 0.6 else rng.choice(SPECIAL)
    ops: list[Callable[[], str]] = [
        lambda: value[:at] + token + value[at:],
        lambda: value[:at] + value[at + 1 :],
        lambda: value[:at] + value[at:][:3] + value[at:],
        lambda: token,
        lambda: value[: rng.randint(0, len(value))],
        lambda: value[:at] + (rng.choice(token) if token else "") + value[at + 1 :],
    ]
    return rng.choice(ops)()


def _bytes(value: bytes, rng: random.Random, pool: Pool, depth: int) -> bytes:
    at = rng.randint(0, len(value))
    other = rng.choice(pool.blobs) if pool.blobs else b"x"
    ops = [value[:at] + other + value[at:], value[:at] + value[at + 1 :], other, value * 2]
    return rng.choice(ops)


def _items(items: list[Any], rng: random.Random, pool: Pool, depth: int) -> list[Any]:
    """Drop, repeat, insert (a mutated copy of an element) or mutate one element."""
    out = list(items)
    if not out:
        return out
    at = rng.randrange(len(out))
    op = rng.randrange(5)
    if op == 0:
        del out[at]
    elif op == 1:
        out.insert(at, out[at])
    elif op == 2:
        out.insert(rng.randint(0, len(out)), mutate(out[at], rng, pool, depth + 1))
    elif op == 3 and len(out) > 1:
        other = rng.randrange(len(out))
        out[at], out[other] = out[other], out[at]
    else:
        out[at] = mutate(out[at], rng, pool, depth + 1)
    return out


def _tuple(value: tuple[Any, ...], rng: random.Random, pool: Pool, depth: int) -> tuple[Any, ...]:
    if not value:
        return value
    at = rng.randrange(len(value))
    return (*value[:at], mutate(value[at], rng, pool, depth + 1), *value[at + 1 :])


def _set(value: Any, rng: random.Random, pool: Pool, depth: int) -> Any:
    items = sorted(value, key=repr)
    try:
        return type(value)(_items(items, rng, pool, depth))
    except TypeError:  # a mutated element that is not hashable
        return value


def _dict(value: dict[Any, Any], rng: random.Random, pool: Pool, depth: int) -> dict[Any, Any]:
    out = dict(value)
    if not out:
        return out
    key = rng.choice(list(out))
    op = rng.randrange(3)
    if op == 0:
        del out[key]
    elif op == 1:
        out[key] = mutate(out[key], rng, pool, depth + 1)
    else:
        new_key = mutate(key, rng, pool, depth + 1)
        with contextlib.suppress(TypeError):  # a mutated key that is not hashable
            out[new_key] = out[key]
    return out


def _range(value: range, rng: random.Random, pool: Pool, depth: int) -> range:
    start, stop = value.start + rng.choice((-1, 0, 1)), value.stop + rng.choice((-2, -1, 1, 2))
    return range(start, stop, value.step)


_SLICE_FIELDS = (-3, -1, 0, 1, 2, 5)


def _slice(value: slice, rng: random.Random, pool: Pool, depth: int) -> slice:
    """One of start, stop, step moved: an int a step away or dropped, a missing one set."""
    fields = [value.start, value.stop, value.step]
    at = rng.randrange(3)
    old = fields[at]
    if old is None:
        fields[at] = rng.choice(_SLICE_FIELDS if at < 2 else (-1, 2))
    else:
        fields[at] = rng.choice([None, _int(old, rng, pool, depth)])
    if fields[2] == 0:
        fields[2] = None  # ValueError, whatever the function does: not worth an input
    return slice(*fields)


_MUTATORS: dict[type, Callable[[Any, random.Random, Pool, int], Any]] = {
    bool: _bool,
    int: _int,
    float: _float,
    str: _str,
    bytes: _bytes,
    list: _items,
    tuple: _tuple,
    set: _set,
    frozenset: _set,
    dict: _dict,
    range: _range,
    slice: _slice,
    Items: lambda v, rng, pool, depth: Items(tuple(_items(list(v.items), rng, pool, depth))),
}


def boundaries(value: Any) -> list[Any]:
    """Edge cases of `value`'s type, built around `value` where that helps (its first element)."""
    kind = type(value)
    if kind is bool:
        return [not value]
    if kind is int:
        return list(_EDGE_INTS)
    if kind is float:
        return list(_EDGE_FLOATS)
    if kind is str:
        return list(_EDGE_STRS)
    if kind is bytes:
        return list(_EDGE_BYTES)
    if kind in (list, Items):
        return _sequence_edges(list(value.items if kind is Items else value), kind)
    if kind is dict:
        first = list(value.items())[:1]
        return [{}, dict(first)]
    if kind in (set, frozenset):
        return [kind(), kind(sorted(value, key=repr)[:1])]
    if kind is range:
        return [range(0), range(value.start, value.start)]
    if kind is slice:
        return _slice_edges(value)
    return []


def _slice_edges(value: slice) -> list[slice]:
    edges = [slice(None), slice(0, 0), slice(None, None, -1), slice(-1, None), slice(None, -1)]
    edges += [slice(value.start, None), slice(None, value.stop)]
    if value.step not in (None, 1):
        edges.append(slice(value.start, value.stop))
    unique = {(e.start, e.stop, e.step): e for e in edges}  # slices hash from Python 3.12 only
    return [e for e in unique.values() if e != value]


def _sequence_edges(items: list[Any], kind: type) -> list[Any]:
    out: list[list[Any]] = [[]]
    if items:
        out += [items[:1], items[:1] * LONG]
        for edge in boundaries(items[0])[:3]:
            out.append([*items, edge])
    return [Items(tuple(x)) if kind is Items else x for x in out]
