"""Iterator arguments made from a traced call's iterables (docs/design.md §3).

The tests of a function that takes any iterable mostly pass lists and strings; how far the call
reads an iterator argument (when it returns, and once its result is read) then never shows, nor
what it does with one iterator passed in two places.  From the plain slots of the traced calls:

- an iterator over a slot's items in place of its sequence (a list, tuple, str or range);
- one object in two slots that took the same kind of iterable: an iterator over the first's
  items (what a function that zips or interleaves its arguments reads in turn from both), and
  where they took lists, one list (what a function that changes one while it reads the other
  does).

A function that needs a sequence raises on an iterator; the reference's golden runs judge that
like any generated input.  Pure: plain values in, patches out.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replicate.inputs.recipes import is_ctor
from replicate.inputs.signature import Slot
from replicate.values import Items

SEQUENCES = (list, tuple, str, range)
MAX_ITEMS = 64  # a sequence longer than this is not made an iterator


@dataclass(frozen=True)
class IterablePatch:
    """A patch of the `at`-th call's slots; `shared`: one object in two of them."""

    at: int
    patch: Mapping[Slot, Any]
    shared: bool


def iterable_patches(calls: Sequence[Mapping[Slot, Any]]) -> Iterator[IterablePatch]:
    """For each call in turn its next patch (shared ones first), until none is left."""
    per_call = [list(_patches(n, values)) for n, values in enumerate(calls)]
    for row in itertools.zip_longest(*per_call):
        yield from (patch for patch in row if patch is not None)


def _patches(at: int, values: Mapping[Slot, Any]) -> Iterator[IterablePatch]:
    slots = [slot for slot, value in values.items() if not is_ctor(slot) and _iterable(value)]
    for first, second in itertools.combinations(slots, 2):
        a, b = values[first], values[second]
        if type(a) is not type(b):
            continue
        shared = Items(tuple(a.items if type(a) is Items else a))
        yield IterablePatch(at, {first: shared, second: shared}, shared=True)
        if type(a) is list:
            same = list(a)
            yield IterablePatch(at, {first: same, second: same}, shared=True)
    for slot in slots:
        value = values[slot]
        if type(value) in SEQUENCES:
            yield IterablePatch(at, {slot: Items(tuple(value))}, shared=False)


def _iterable(value: Any) -> bool:
    if type(value) is Items:
        return len(value.items) <= MAX_ITEMS
    return type(value) in SEQUENCES and len(value) <= MAX_ITEMS
