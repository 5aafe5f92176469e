"""Plain values: builtin-typed data the trusted side can read from, and write as, tagged JSON.

The runner reports the arguments of every traced call in its tagged encoding (``args_in``).  This
module turns the plain part of that encoding back into Python values — none, bool, int, float, str,
bytes, list, tuple, dict, set, frozenset, range, slice (of ints and None), and an iterator's
items — and encodes such values
the way the runner would, so generated inputs can be compared with, and rendered like, traced
ones.  Pure: JSON in, values out; nothing is unpickled, evaluated or imported.

An iterator argument is read as ``Items`` (its items, in order); pickled for the jail it becomes a
fresh list iterator over them.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from replicate.values.tagged import read_node

Tagged = Mapping[str, Any]

_MAX_DEPTH = 32
_MAX_INT_DIGITS = 4000


@dataclass(frozen=True)
class Items:
    """The items of an iterator argument; becomes `iter(list(items))` in the jail."""

    items: tuple[Any, ...]


class NotPlain(ValueError):
    """A tagged node that is not built of plain values only."""


def decode(node: Any, depth: int = 0) -> Any:
    """The plain value a tagged node encodes; `NotPlain` for anything else (objects, refs ...)."""
    return read_node(node, depth, _READERS, max_depth=_MAX_DEPTH, error=NotPlain)


def try_decode(node: Any) -> tuple[bool, Any]:
    """(True, value) when `node` is plain, else (False, None)."""
    try:
        return True, decode(node)
    except NotPlain:
        return False, None


def _int(node: Tagged, depth: int) -> int:
    text = node["v"]
    if not isinstance(text, str) or len(text) > _MAX_INT_DIGITS:
        raise NotPlain("int too long")
    return int(text)


def _float(node: Tagged, depth: int) -> float:
    return float.fromhex(node["v"])


def _bytes(node: Tagged, depth: int) -> bytes:
    return base64.b64decode(node["v"], validate=True)


def _seq(node: Tagged, depth: int) -> list[Any]:
    values = node["v"]
    if not isinstance(values, list):
        raise NotPlain("not a list of nodes")
    return [decode(item, depth) for item in values]


def _set(node: Tagged, depth: int) -> set[Any]:
    return set(_seq(node, depth))


def _dict(node: Tagged, depth: int) -> dict[Any, Any]:
    pairs = node["v"]
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
        raise NotPlain("not key/value pairs")
    return {decode(k, depth): decode(v, depth) for k, v in pairs}


def _iter(node: Tagged, depth: int) -> Items:
    if node.get("truncated") is not False or "raised" in node:
        raise NotPlain("an endless or failing iterator")
    return Items(tuple(_seq(node, depth)))


def _range(node: Tagged, depth: int) -> range:
    start, stop, step = (int(part) for part in node["v"])
    return range(start, stop, step)


def _slice(node: Tagged, depth: int) -> slice:
    parts = _seq(node, depth)
    if len(parts) != 3 or any(p is not None and type(p) is not int for p in parts):
        raise NotPlain("a slice of other than ints and None")
    return slice(*parts)


_READERS: dict[str, Any] = {
    "none": lambda node, depth: None,
    "bool": lambda node, depth: node["v"] is True,
    "int": _int,
    "float": _float,
    "str": lambda node, depth: str(node["v"]),
    "bytes": _bytes,
    "list": _seq,
    "tuple": lambda node, depth: tuple(_seq(node, depth)),
    "set": _set,
    "frozenset": lambda node, depth: frozenset(_seq(node, depth)),
    "dict": _dict,
    "iter": _iter,
    "range": _range,
    "slice": _slice,
}


def encode(value: Any) -> dict[str, Any]:
    """The runner's tagged encoding of a plain value (sets in canonical order)."""
    kind = type(value)
    if value is None:
        return {"t": "none"}
    if kind is bool:
        return {"t": "bool", "v": value}
    if kind is int:
        return {"t": "int", "v": str(value)}
    if kind is float:
        return {"t": "float", "v": float.hex(value)}
    if kind is str:
        return {"t": "str", "v": value}
    if kind is bytes:
        return {"t": "bytes", "v": base64.b64encode(value).decode("ascii")}
    if kind is range:
        return {"t": "range", "v": [str(value.start), str(value.stop), str(value.step)]}
    if kind is slice:
        return {"t": "slice", "v": [encode(value.start), encode(value.stop), encode(value.step)]}
    if kind in (list, tuple):
        return {"t": kind.__name__, "v": [encode(item) for item in value]}
    if kind in (set, frozenset):
        return {"t": kind.__name__, "v": sorted((encode(i) for i in value), key=canonical)}
    if kind is dict:
        return {"t": "dict", "v": [[encode(k), encode(v)] for k, v in value.items()]}
    if kind is Items:
        return {"t": "iter", "v": [encode(item) for item in value.items], "truncated": False}
    raise NotPlain(f"not a plain value: {kind.__name__}")


def canonical(node: Any) -> str:
    """A string equal for equal tagged nodes: set members sorted, mapping keys sorted."""
    return json.dumps(_sorted_sets(node), sort_keys=True, separators=(",", ":"))


def _sorted_sets(node: Any) -> Any:
    if isinstance(node, Mapping):
        out = {k: _sorted_sets(v) for k, v in node.items()}
        if node.get("t") in ("set", "frozenset", "dict") and isinstance(out.get("v"), list):
            out["v"] = sorted(out["v"], key=lambda n: json.dumps(n, sort_keys=True))
        return out
    if isinstance(node, list):
        return [_sorted_sets(item) for item in node]
    return node


def size(value: Any) -> int:
    """A rough measure of how big a plain value is (for budgets and shrinking order)."""
    kind = type(value)
    if kind is Items:
        return 1 + sum(size(i) for i in value.items)
    if kind in (list, tuple, set, frozenset):
        return 1 + sum(size(i) for i in value)
    if kind is dict:
        return 1 + sum(size(k) + size(v) for k, v in value.items())
    if kind in (str, bytes):
        return 1 + len(value)
    if kind is int:
        return 1 + len(str(abs(value))) + (value < 0)
    if kind is float:
        return 2 if math.isfinite(value) and value == int(value) else 4
    return 1


def canonical_of(value: Any) -> str:
    """`canonical` of a plain value's encoding: a total order for set members."""
    return canonical(encode(value))
