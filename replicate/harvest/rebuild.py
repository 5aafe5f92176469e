"""Pickling a call's arguments in the recording plugin: the size guard, and `self` rebuilt.

Standard library only: shipped beside the plugin as `replicate_harvest_rebuild.py`.
"""

from __future__ import annotations

import copyreg
import functools
import operator
import os
import pickle
import pkgutil
import re
import sys
import types
import weakref
from collections import Counter
from typing import Any

try:
    from .test_code import is_test_file
except ImportError:
    from replicate_harvest_test_code import is_test_file  # type: ignore[no-redef]

LARGE_LEN = 5_000
_SIZED = (list, tuple, dict, set, frozenset, str, bytes, bytearray)


def looks_large(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """A cheap guard before pickling: a builtin container argument (or attribute) that is huge."""
    values: list[Any] = [*args, *kwargs.values()]
    for value in list(values):
        if type(value) in _SIZED:
            continue
        try:
            inner = object.__getattribute__(value, "__dict__")
        except Exception:  # noqa: BLE001 - no instance dict
            continue
        if type(inner) is dict:
            values.extend(inner.values())
    return any(type(v) in _SIZED and len(v) > LARGE_LEN for v in values)


class _TooLarge(Exception):
    pass


class _Capped:
    """A file that takes at most `cap` bytes and raises `_TooLarge` past them."""

    __slots__ = ("cap", "parts", "size")

    def __init__(self, cap: int) -> None:
        self.cap, self.size = cap, 0
        self.parts: list[bytes] = []

    def write(self, data: Any) -> int:
        self.size += len(data)
        if self.size > self.cap:
            raise _TooLarge
        self.parts.append(bytes(data))
        return len(data)


def dumps_capped(obj: Any, cap: int) -> bytes | None:
    """`pickle.dumps(obj, protocol=4)`, the same bytes, or None when they would exceed `cap`:
    found at the first frame written past it (the pickler writes a frame of ~64 KiB at a time
    to a file), not after pickling the whole object.  A `self` holding 100,000 items that a
    test calls thousands of times costs a tenth of pickling it whole.  Raises what pickling
    raises."""
    out = _Capped(cap)
    pickler = pickle.Pickler(out, protocol=4)
    # A plain dict, made afresh: copyreg's table as it is now (a library registers its reducers
    # when imported), ours over it. A ChainMap here cost a Python-level lookup per object
    # pickled: 25 of 75 s of a harvest of parso's tests went to ChainMap.__getitem__.
    pickler.dispatch_table = {**copyreg.dispatch_table, **_OURS}
    try:
        pickler.dump(obj)
    except _TooLarge:
        return None
    return b"".join(out.parts)


def _reduce_match(match: re.Match[Any]) -> Any:
    """A `re.Match` (which does not pickle) as what makes it again: its pattern matched on its
    string at its start (`pos` then reads its start); one that this would not give back, group
    for group, still refuses."""
    again = match.re.match(match.string, match.start(), match.endpos)
    if again is None or again.regs != match.regs:
        raise pickle.PicklingError("cannot pickle this 're.Match' object")
    return operator.methodcaller("match", match.string, match.start(), match.endpos), (match.re,)


def method_attribute(owner: Any, method: Any) -> str | None:
    """The attribute of `owner` that gives `method` back (bound to it), or None: its name, or
    that name mangled (`__key` defined in class `Ranker` is `_Ranker__key`)."""
    name = getattr(method, "__name__", None)
    if type(name) is not str:
        return None
    names = [name]
    if name.startswith("__") and not name.endswith("__"):
        names += [f"_{k.__name__.lstrip('_')}{name}" for k in type(owner).__mro__]
    for attribute in names:
        try:
            if getattr(owner, attribute) == method:
                return attribute
        except Exception:  # noqa: BLE001 - an attribute lookup of the library's making
            continue
    return None


def _reduce_method(method: types.MethodType) -> Any:
    """A bound method as `getattr(self, attribute)`, as `pickle` writes it, but by the
    attribute that gives it back (pickle's own reads `__name__`, which a private method's
    mangled attribute is not: its pickle would not load)."""
    attribute = method_attribute(method.__self__, method)
    if attribute is None:
        raise pickle.PicklingError(f"cannot pickle the bound method {method.__name__!r}")
    return getattr, (method.__self__, attribute)


class _Sentinels:
    """The bare `object()` values the loaded library modules bind to a name (`_absent =
    object()`), by id: the first name by module name, then attribute name.  Not the standard
    library's, the harvest's, pytest's or a test module's (`is_test`: by file name).  Built
    again when modules were imported since."""

    SKIPPED = ("_", "replicate_", "pytest", "pluggy")

    def __init__(self, is_test: Any) -> None:
        self.is_test = is_test
        self.modules = -1
        self.names: dict[int, tuple[object, str]] = {}

    def name(self, obj: object) -> str | None:
        if self.modules != len(sys.modules):
            self._index()
        known = self.names.get(id(obj))
        return known[1] if known is not None and known[0] is obj else None

    def _index(self) -> None:
        stdlib: frozenset[str] = getattr(sys, "stdlib_module_names", frozenset())
        self.modules, self.names = len(sys.modules), {}
        for module_name in sorted(n for n in list(sys.modules) if isinstance(n, str)):
            module = sys.modules.get(module_name)
            filename = getattr(module, "__file__", None)
            if (
                module_name.split(".")[0] in stdlib
                or module_name.startswith(self.SKIPPED)
                or not isinstance(filename, str)
                or self.is_test(os.path.abspath(filename), os.getcwd())
            ):
                continue
            for attr, value in sorted(vars(module).items()):
                if type(value) is object and id(value) not in self.names:
                    self.names[id(value)] = (value, f"{module_name}:{attr}")


SENTINELS = _Sentinels(is_test_file)


def _reduce_sentinel(obj: object) -> Any:
    """A bare `object()` a library module binds to a name (a sentinel, orderedmultidict's
    `_absent`) by that name, so it loads as the module's own object: pickle would make a fresh
    one, which no `is _absent` in the library matches.  Any other as pickle makes it."""
    name = SENTINELS.name(obj)
    return (pkgutil.resolve_name, (name,)) if name is not None else (object, ())


# Our reducers, over copyreg's table (`dumps_capped`)
_OURS: dict[Any, Any] = {
    re.Match: _reduce_match,
    types.MethodType: _reduce_method,
    object: _reduce_sentinel,
}


def replayed(data: bytes, consumed: dict[Any, list[Any]]) -> tuple[tuple[Any, ...], dict[Any, Any]]:
    """A call's arguments pickled before it (`data`, our own pickle: a copy of their state
    then) with each slot of `consumed` holding an iterator over the items the call read from
    the generator passed there."""
    args, kwargs = pickle.loads(data)
    args = list(args)
    for slot, items in consumed.items():
        if isinstance(slot, int):
            args[slot] = iter(list(items))
        else:
            kwargs[slot] = iter(list(items))
    return tuple(args), kwargs


CTOR_ATTEMPTS = 20_000  # constructions of one class pickled at most (each costs a pickling)


class _Rebuild:
    """Pickles as the class call `cls(*args, **kwargs)`: loading builds a fresh instance."""

    __slots__ = ("args", "cls", "kwargs")

    def __init__(self, cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.cls, self.args, self.kwargs = cls, args, kwargs

    def __reduce__(self) -> Any:
        if self.kwargs:
            return (functools.partial(self.cls, **self.kwargs), self.args)
        return (self.cls, self.args)


class Memory:
    """The pickled class call that built each live instance, by `id`, guarded by a weakref.

    Never keeps an instance alive (nor hashes it: a dict subclass has no hash); the bytes held
    for one class's live instances stay within `budget`; the first call per instance wins."""

    def __init__(self, max_bytes: int, budget: int) -> None:
        self.max_bytes = max_bytes
        self.budget = budget
        self.entries: dict[int, tuple[weakref.ref[Any], type, bytes]] = {}
        self.spent: Counter[str] = Counter()
        self.attempts: Counter[str] = Counter()

    def remember(self, name: str, obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if self.lookup(obj, type(obj)) is not None or self.attempts[name] >= CTOR_ATTEMPTS:
            return
        self.attempts[name] += 1
        if looks_large(args, kwargs):
            return
        try:
            data = dumps_capped((args, kwargs), self.max_bytes)
        except Exception:  # noqa: BLE001 - this instance cannot be rebuilt
            return
        if data is None or self.spent[name] + len(data) > self.budget:
            return
        key = id(obj)

        def forget(ref: weakref.ref[Any]) -> None:
            entry = self.entries.get(key)
            if entry is not None and entry[0] is ref:
                del self.entries[key]
                self.spent[name] -= len(entry[2])

        try:
            ref = weakref.ref(obj, forget)
        except TypeError:  # instances without a weakref slot
            return
        self.entries[key] = (ref, type(obj), data)
        self.spent[name] += len(data)

    def lookup(self, obj: Any, cls: type) -> bytes | None:
        """The pickled `(args, kwargs)` that built `obj`, if it was built as exactly `cls`."""
        entry = self.entries.get(id(obj))
        if entry is None or entry[0]() is not obj or entry[1] is not cls:
            return None
        return entry[2]

    def rebuilt(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes | None:
        """The call pickled with `self` (`args[0]`) replaced by its rebuild, when `self` is
        what fails to pickle and its class call is remembered; None otherwise."""
        me = args[0] if args else None
        cls = type(me)
        data = self.lookup(me, cls)
        if data is None:
            return None
        try:
            pickle.dumps(me, protocol=4)
        except Exception:  # noqa: BLE001 - expected: `self` is what fails
            pass
        else:
            return None  # `self` pickles: another argument is at fault
        try:
            cargs, ckwargs = pickle.loads(data)  # our own pickle of the constructor call
            rebuild = _Rebuild(cls, cargs, ckwargs)
            return pickle.dumps(((rebuild, *args[1:]), kwargs), protocol=4)
        except Exception:  # noqa: BLE001 - the class itself is not importable, say
            return None
