"""Iterator arguments made from a traced call's iterables (docs/design.md §3).

The tests of a function that takes any iterable mostly pass lists and strings; how far the call
reads an iterator argument (when it returns, and once its result is read) then never shows, nor
what it does with one iterator passed in two places.  From the plain slots of the traced calls
that take iterables, by what the tests pass there (an iterator, or iterables of more than one
kind: a list in one call and a str in another; a slot the tests only ever give a str is text,
and an iterator there would be no call the function is made for), or by what the signature
says (`declares_iterable`: a parameter named `iterable(s)`/`iterator(s)`, or annotated
`Iterable`/`Iterator`, such as more-itertools' `interleave_longest(*iterables)`, whose tests
pass only lists):

- an iterator over a slot's items in place of its sequence (a list, tuple, str or range);
- one object in two such slots that took the same kind of iterable: an iterator over the
  longer one's items (what a function that zips or interleaves its arguments reads in turn from
  both), and where they took lists, one list (what a function that changes one while it reads
  the other does).

Pure: plain values in, patches out.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replicate.inputs.recipes import is_ctor
from replicate.inputs.signature import Parameter, ParamSlot
from replicate.values import Items

SEQUENCES = (list, tuple, str, range)
MAX_ITEMS = 64  # a sequence longer than this is not made an iterator
ITERABLE_NAMES = frozenset({"iterable", "iterables", "iterator", "iterators"})
ITERABLE_HINTS = frozenset({"Iterable", "Iterator"})


@dataclass(frozen=True)
class IterablePatch:
    """A patch of the `at`-th call's slots; `shared`: one object in two of them."""

    at: int
    patch: Mapping[ParamSlot, Any]
    shared: bool


def declares_iterable(param: Parameter | None) -> bool:
    """Whether the signature says the parameter takes any iterable: by its name, or an
    annotation naming `Iterable` or `Iterator` (`typing.Iterable[str]`, `Iterator | None`)."""
    if param is None:
        return False
    if param.name.lower() in ITERABLE_NAMES:
        return True
    nodes = ast.walk(param.annotation) if param.annotation is not None else ()
    return any(_name_of(node) in ITERABLE_HINTS for node in nodes)


def _name_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def iterable_patches(
    calls: Sequence[Mapping[ParamSlot, Any]], declared: Collection[ParamSlot] = ()
) -> Iterator[IterablePatch]:
    """For each call in turn its next patch (shared ones first), until none is left; `declared`:
    the slots the signature says take any iterable, whatever the tests passed there."""
    kinds: dict[ParamSlot, set[type]] = {}
    for values in calls:
        for slot, value in values.items():
            if type(value) is Items or type(value) in SEQUENCES:
                kinds.setdefault(slot, set()).add(type(value))
    takes = {slot for slot, seen in kinds.items() if len(seen) > 1 or Items in seen}
    takes |= set(declared) & set(kinds)
    per_call = [list(_patches(n, values, takes)) for n, values in enumerate(calls)]
    for row in itertools.zip_longest(*per_call):
        yield from (patch for patch in row if patch is not None)


def _patches(
    at: int, values: Mapping[ParamSlot, Any], takes: set[ParamSlot]
) -> Iterator[IterablePatch]:
    slots = [slot for slot in values if slot in takes and not is_ctor(slot)]
    slots = [slot for slot in slots if _iterable(values[slot])]
    for first, second in itertools.combinations(slots, 2):
        a, b = values[first], values[second]
        if type(a) is not type(b):
            continue
        longer = max(_items(a), _items(b), key=len)
        shared = Items(longer)
        yield IterablePatch(at, {first: shared, second: shared}, shared=True)
        if type(a) is list:
            same = list(longer)
            yield IterablePatch(at, {first: same, second: same}, shared=True)
    for slot in slots:
        value = values[slot]
        if type(value) in SEQUENCES:
            yield IterablePatch(at, {slot: Items(tuple(value))}, shared=False)


def _items(value: Any) -> tuple[Any, ...]:
    return value.items if type(value) is Items else tuple(value)


def _iterable(value: Any) -> bool:
    if type(value) is Items:
        return len(value.items) <= MAX_ITEMS
    return type(value) in SEQUENCES and len(value) <= MAX_ITEMS
