"""Pairwise relations between argument slots that every traced call respects.

When the reference returned on at least three traced calls and in each of them slot ``a`` was
``<=`` (or ``<``, or ``==``) slot ``b``, or their lengths were equal, a generated call must keep
that relation: it is likely a precondition of the function (``clamp(value, low, high)`` with
``low <= high``), and outside its preconditions a function's behaviour is an accident of its
implementation, which a correct re-implementation need not share.  Pure.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replicate.inputs.signature import ParamSlot
from replicate.values import Items

MIN_CALLS = 3
_SIZED = (str, bytes, list, tuple, dict, set, frozenset)
_NUMBER_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "<": operator.lt,
    "<=": operator.le,
}


@dataclass(frozen=True)
class Relation:
    left: ParamSlot
    right: ParamSlot
    op: str  # "==", "<", "<=" on numbers; "len==", "len<=" on sized values


def _number(value: Any) -> bool:
    return type(value) in (int, float)  # NaN too: it breaks every order


def _length(value: Any) -> int | None:
    if type(value) is Items:
        return len(value.items)
    return len(value) if type(value) in _SIZED else None


def _check(op: str, left: Any, right: Any) -> bool | None:
    """Whether the relation holds; None when it does not apply to these values."""
    if op.startswith("len"):
        a, b = _length(left), _length(right)
        if a is None or b is None:
            return None
        return a == b if op == "len==" else a <= b
    if not (_number(left) and _number(right)):
        return None
    return _NUMBER_OPS[op](left, right)


def _holds_everywhere(op: str, pairs: Sequence[tuple[Any, Any]]) -> bool:
    results = [_check(op, a, b) for a, b in pairs]
    applicable = [r for r in results if r is not None]
    return len(applicable) >= MIN_CALLS and len(applicable) == len(results) and all(applicable)


def infer_relations(calls: Sequence[Mapping[ParamSlot, Any]]) -> list[Relation]:
    """The strongest relation per ordered pair of slots that holds in every call given."""
    slots = sorted({slot for call in calls for slot in call}, key=str)
    found: list[Relation] = []
    for left, right in itertools.permutations(slots, 2):
        pairs = [(c[left], c[right]) for c in calls if left in c and right in c]
        if len(pairs) < MIN_CALLS:
            continue
        for op in ("==", "<", "<=", "len==", "len<="):
            if op in ("==", "len==") and str(left) > str(right):
                continue  # symmetric: once per pair
            if _holds_everywhere(op, pairs):
                found.append(Relation(left, right, op))
                break
    return found


def holds(relations: Sequence[Relation], values: Mapping[ParamSlot, Any]) -> bool:
    """False when the call breaks a relation that applies to it."""
    for rel in relations:
        applies = rel.left in values and rel.right in values
        if applies and _check(rel.op, values[rel.left], values[rel.right]) is False:
            return False
    return True
