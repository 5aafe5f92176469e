"""Probes: the arguments a returned function without a verified name is called on, drawn from
the call's own input, so the reference's run and a candidate's probe it alike."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator
from typing import Any

from .base import (
    _MISSING,
    _UNVERIFIED,
    _code_argcount,
    _code_flags,
    _dict_items,
    _function_code,
    _function_defaults,
    _FunctionType,
    _id,
    _Partial,
    _partial_args,
    _partial_func,
    _type,
    wire,
)
from .naming import _callable_name

globals()["__builtins__"] = dict(builtins.__dict__)  # see base

_PROBED, _PROBE = wire.PROBED, wire.PROBE
_MAX_PROBES, _MAX_PROBED = wire.MAX_PROBES, wire.MAX_PROBED
_FROM_INPUT = 4  # probe values taken from the call's own arguments, before the fixed ones
_MAX_PROBE_ARITY = 3
_CO_VARARGS = 0x04  # inspect.CO_VARARGS, without importing inspect


def _fixed_probe_values() -> list[Any]:
    """Plain values every probe set ends with, in an order that mixes their types."""
    return [0, "a", None, [1, 2], 1, "", -1, (1,), 2.5, "abc", {}, True]


class Probes:
    """The arguments a returned function is probed with, drawn from one input alone: the plain
    values among the call's own arguments (copied before the call), then `_fixed_probe_values`;
    the same in the reference's run and a candidate's, whatever the hash seed."""

    __slots__ = ("left", "taken")

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.left = _MAX_PROBED
        self.taken: list[Any] = []
        for value in [*args, *[v for _, v in _dict_items(kwargs)]]:
            copy = _plain_copy(value, 0)
            if copy is not _MISSING and len(self.taken) < _FROM_INPUT:
                self.taken.append(copy)

    def calls(self, fn: Callable[..., Any], key_of: Callable[[Any], str]) -> list[list[Any]]:
        """Up to `_MAX_PROBES` argument lists of `fn`'s arity (one empty list for arity 0), of
        values distinct by `key_of` (their encoding, as JSON text)."""
        values: list[Any] = []
        seen: set[str] = set()
        for value in [*self.taken, *_fixed_probe_values()]:
            key = key_of(value)
            if key not in seen:
                seen.add(key)
                values.append(value)
        arity = _arity(fn)
        if arity == 0:
            return [[]]
        values = values[:_MAX_PROBES]
        return [_alike(values, k, arity) for k in range(len(values))]


def _alike(values: list[Any], k: int, arity: int) -> list[Any]:
    """`values[k]` and, for a function of more arguments, the next values of its exact type
    (`values[k]` again where there are too few): a comparator gets (0, 1), ('a', '')..."""
    first = values[k]
    later = values[k + 1 :] + values[:k]
    same = [value for value in later if _type(value) is _type(first)]
    return [first] + [same[j] if j < len(same) else first for j in range(arity - 1)]


def _plain_copy(x: Any, depth: int) -> Any:
    """A copy of `x` if it is a small plain value (exact builtin types, no candidate code run),
    else `_MISSING`."""
    t = _type(x)
    if x is None or t is bool or t is float:
        return x
    if t is int:
        return x if -10_000 <= x <= 10_000 else _MISSING
    if t is str or t is bytes:
        return x if len(x) <= 200 else _MISSING
    if depth >= 2 or not (t is list or t is tuple or t is dict or t is set or t is frozenset):
        return _MISSING
    if len(x) > 16:
        return _MISSING
    if t is dict:
        pairs = [(_plain_copy(k, 3), _plain_copy(v, depth + 1)) for k, v in _dict_items(x)]
        if any(k is _MISSING or v is _MISSING for k, v in pairs):
            return _MISSING
        return dict(pairs)
    items = [_plain_copy(item, depth + 1) for item in _COPY_ITER[_id(t)](x)]
    return _MISSING if any(item is _MISSING for item in items) else t(items)


_COPY_ITER: dict[int, Callable[[Any], Iterator[Any]]] = {
    _id(list): list.__iter__,
    _id(tuple): tuple.__iter__,
    _id(set): set.__iter__,
    _id(frozenset): frozenset.__iter__,
}


def _fresh(call: list[Any]) -> list[Any]:
    """Copies of a probe's arguments (plain values), so no probe sees another's changes."""
    return [_plain_copy(value, 0) for value in call]


def _unnamed_function(x: Any) -> bool:
    """Whether `x` is a Python function (or a partial of one) whose name does not verify."""
    fn = x
    while _type(fn) is _Partial:
        fn = _partial_func(fn)
    return _type(fn) is _FunctionType and _callable_name(fn).startswith(_UNVERIFIED)


def _arity(fn: Any) -> int:
    """How many positional arguments a probe passes: the required ones (a partial's bound ones
    taken off), at most `_MAX_PROBE_ARITY`; one if it takes any at all, else none."""
    bound = 0
    while _type(fn) is _Partial:
        bound += len(_partial_args(fn))
        fn = _partial_func(fn)
    code = _function_code(fn)
    defaults = _function_defaults(fn)
    takes = _code_argcount(code) - bound
    required = takes - (len(defaults) if _type(defaults) is tuple else 0)
    if required > 0:
        return min(required, _MAX_PROBE_ARITY)
    return 1 if takes > 0 or _code_flags(code) & _CO_VARARGS else 0


def _drive(coro: Any) -> Any:
    import asyncio  # only for async targets

    return asyncio.run(coro)
