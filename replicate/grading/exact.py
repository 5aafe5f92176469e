"""Outcomes equal exactly, without the walk: the checks `compare` tries before it walks two
outcomes node by node.

Exact equality keeps types (1, 1.0 and True differ) and ignores only the call's duration ``t``.
Two outcomes read from the same channel text (`replicate.jail.known_outcomes`) hold the very
same values: they are equal without looking inside, and `Held` keys a cache by that identity.
Nothing on the trusted side changes an outcome once read, which is what makes identity enough.
"""

from __future__ import annotations

import json
import marshal
from typing import Any

from replicate.batch import StoredOutcome


def without_time(outcome: StoredOutcome) -> dict[str, Any]:
    """The outcome less the call's duration ``t``."""
    return {k: v for k, v in outcome.items() if k != "t"}


def same_objects(untimed: StoredOutcome, other: StoredOutcome) -> bool:
    """Whether `other` holds, but for ``t``, the very objects `untimed` holds (so equals it)."""
    if len(other) - ("t" in other) != len(untimed):
        return False
    missing = object()
    return all(other.get(k, missing) is v for k, v in untimed.items())


def same_outcome(a: StoredOutcome, b: StoredOutcome) -> bool:
    """Exact canonical equality of two outcomes, ignoring the call's duration `t`.

    The same values are equal at once; equal `marshal` bytes (types kept) mean equal canonical
    JSON, and cost a sixth of it; unequal ones (keys in another order, say) are settled
    canonically."""
    a_ = without_time(a)
    if same_objects(a_, b):
        return True
    b_ = without_time(b)
    try:
        if marshal.dumps(a_, 2) == marshal.dumps(b_, 2):
            return True
    except ValueError:  # not a decoded frame's value: the canonical form decides
        pass
    return canonical(a_) == canonical(b_)


def canonical(node: Any) -> str:
    """A JSON value's one text: keys sorted, compact, ASCII."""
    return json.dumps(node, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def text_leaves(node: Any) -> bool:
    """Whether every leaf of a JSON value is a string or null (where ``==`` is exact)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            stack += item.values()
        elif type(item) is list:
            stack += item
        elif type(item) is not str and item is not None:
            return False
    return True


class Held:
    """An untimed outcome's items as a cache key by the identity of its values, which it holds
    (so no other object takes their ids while it is kept)."""

    __slots__ = ("hash", "items")

    def __init__(self, items: tuple[tuple[str, Any], ...]) -> None:
        self.items = items
        self.hash = hash(tuple((k, id(v)) for k, v in items))

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        if type(other) is not Held or len(other.items) != len(self.items):
            return False
        pairs = zip(self.items, other.items, strict=True)
        return all(a[0] == b[0] and a[1] is b[1] for a, b in pairs)
