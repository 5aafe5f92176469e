"""Recipes: the pickled description of a generated call, made on the trusted side and turned into
the call inside the jail by the runner (`replicate.jail.runner`, which documents the format;
its tags are the wire module's, `replicate.jail.wire`).

A recipe names a seed call (the pickle recorded in the repository's tests, never unpickled here)
and the plain values that replace some of its argument slots; a method's recipe may also carry
the pickled class call that built the seed's `self`, whose plain arguments are slots named
``self.<position or keyword>``: replacing any of them has the runner build `self` afresh.
"""

from __future__ import annotations

import base64
import functools
import io
import itertools
import pickle
import pickletools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from replicate.core import CallInput, Replacement
from replicate.inputs.signature import ParamSlot
from replicate.jail import CTOR_RECIPE_TAG, RECIPE_TAG
from replicate.values import plain

CTOR_SLOT = "self."  # prefix of the slots of the class call that built a method's `self`


def ctor_slot(slot: ParamSlot) -> str:
    return f"{CTOR_SLOT}{slot}"


def is_ctor(slot: ParamSlot) -> bool:
    return isinstance(slot, str) and slot.startswith(CTOR_SLOT)


def replacements(patch: Mapping[ParamSlot, Any]) -> tuple[Replacement, ...]:
    return tuple(
        Replacement(slot=slot, value=plain.encode(v))
        for slot, v in sorted(patch.items(), key=lambda kv: str(kv[0]))
    )


def _split(patch: Mapping[ParamSlot, Any]) -> tuple[dict[Any, Any], ...]:
    """A patch as the recipe's four maps: call positions, call keywords, class-call positions,
    class-call keywords."""
    args: dict[Any, Any] = {}
    kwargs: dict[Any, Any] = {}
    c_args: dict[Any, Any] = {}
    c_kwargs: dict[Any, Any] = {}
    for slot, value in patch.items():
        if not is_ctor(slot):
            (args if isinstance(slot, int) else kwargs)[slot] = value
            continue
        name = str(slot)[len(CTOR_SLOT) :]
        if name.isdigit():
            c_args[int(name)] = value
        else:
            c_kwargs[name] = value
    return args, kwargs, c_args, c_kwargs


class _Pickler(pickle.Pickler):
    """Plain values only (sets already `_in_order`); iterator arguments as fresh list
    iterators."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is plain.Items:
            return iter, (list(obj.items),)
        return NotImplemented


class _Ordered:
    """A set or frozenset pickled as its kind called on its members in a fixed order."""

    __slots__ = ("kind", "members")

    def __init__(self, kind: type, members: list[Any]) -> None:
        self.kind, self.members = kind, members

    def __reduce__(self) -> tuple[type, tuple[list[Any]]]:
        return self.kind, (self.members,)


def _in_order(value: Any, made: dict[int, Any]) -> Any:
    """`value` with every set and frozenset in it pickled with its members in a fixed order, so
    a recipe's bytes do not depend on the hash seed of the process that made it: the C pickler
    never asks `reducer_override` about an exact set, and writes one in hash order (a set of
    strings came out in another order in every gen).  Containers are rebuilt once each
    (`made`, by identity), so what the value shared it still shares."""
    kind = type(value)
    if kind not in (set, frozenset, list, tuple, dict, plain.Items):
        return value
    if id(value) in made:
        return made[id(value)]
    if kind in (set, frozenset):
        members = sorted(value, key=plain.canonical_of)
        done: Any = _Ordered(kind, [_in_order(m, made) for m in members])
    elif kind is dict:
        done = {_in_order(k, made): _in_order(v, made) for k, v in value.items()}
    elif kind is plain.Items:
        done = plain.Items(tuple(_in_order(item, made) for item in value.items))
    else:
        done = kind(_in_order(item, made) for item in value)
    made[id(value)] = done
    return done


@dataclass(frozen=True)
class SeedCall:
    """What a generated input is made from: the recorded call's pickle, the pickle of the class
    call that built its `self` (a method's, when recorded), and whether `self` is built from
    that class call rather than taken from the recorded call."""

    call: bytes
    ctor: bytes | None = None
    build: bool = False


def recipe_b64(
    seed: bytes, patch: Mapping[ParamSlot, Any], ctor: bytes | None = None, build: bool = False
) -> str:
    """The pickled recipe the runner turns into a call: the seed call with slots replaced; with
    `ctor` (the pickled class call that built the seed's `self`) its `self.` slots too, and
    `self` built afresh from it when `build` or when the patch replaces any of them."""
    made: dict[int, Any] = {}
    args, kwargs, c_args, c_kwargs = (_in_order(part, made) for part in _split(patch))
    if ctor is None and (c_args or c_kwargs or build):
        raise ValueError("a recipe building `self` needs the class call that built it")
    buffer = io.BytesIO()
    if ctor is None:
        recipe: tuple[Any, ...] = (RECIPE_TAG, seed, args, kwargs)
    else:
        built = build or bool(c_args or c_kwargs)
        recipe = (CTOR_RECIPE_TAG, seed, ctor, built, args, kwargs, c_args, c_kwargs)
    _Pickler(buffer, protocol=4).dump(recipe)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def recipe_parts(pickle_b64: str) -> SeedCall | None:
    """The seed call inside a recipe, read from the opcodes (nothing is unpickled); None when
    the input is no recipe."""
    try:
        ops = pickletools.genops(base64.b64decode(pickle_b64))
        found = [(op.name, arg) for op, arg, _ in itertools.islice(ops, 16) if op.name != "MEMOIZE"]
    except (ValueError, TypeError):
        return None
    for n, (_, arg) in enumerate(found):
        if arg not in (RECIPE_TAG, CTOR_RECIPE_TAG) or n + 1 >= len(found):
            continue
        seed = found[n + 1][1]
        if not isinstance(seed, bytes):
            return None
        if arg == RECIPE_TAG:
            return SeedCall(seed)
        ctor = found[n + 2][1] if n + 2 < len(found) else None
        if not isinstance(ctor, bytes):
            return SeedCall(seed)
        build = n + 3 < len(found) and found[n + 3][0] == "NEWTRUE"
        return SeedCall(seed, ctor, build)
    return None


def seed_call(item: CallInput) -> SeedCall:
    """A traced or generated input's seed call (a plain pickle is its own seed)."""
    return _seed_call(item.pickle_b64)


@functools.lru_cache(maxsize=512)
def _seed_call(pickle_b64: str) -> SeedCall:
    """Kept by the pickle's text (the last 512: a few targets' seeds at a time): widening asks
    it of the same few seeds thousands of times, and each answer reads the recipe's opcodes."""
    return recipe_parts(pickle_b64) or SeedCall(base64.b64decode(pickle_b64))


def seed_size(item: CallInput) -> int:
    parts = seed_call(item)
    return len(parts.call) + len(parts.ctor or b"")


def with_replacements(
    item: CallInput, patch: Mapping[ParamSlot, Any], index: int
) -> CallInput | None:
    """A copy of a generated input with other plain values in the same slots (for shrinking)."""
    parts = recipe_parts(item.pickle_b64)
    if parts is None:
        return None
    return item.model_copy(
        update={
            "index": index,
            "pickle_b64": recipe_b64(parts.call, patch, parts.ctor, parts.build),
            "replaced": replacements(patch),
            "call": "",
        }
    )
