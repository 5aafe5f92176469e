"""Wrapping the targets so each call goes through the recorder: module functions in every
loaded module that refers to them, methods in their class, and the `__init__` of method targets'
classes so each instance remembers the class call that built it.

Standard library only: shipped beside the plugin as `replicate_harvest_wrapping.py`.  The
wrappers record through the harvest state `install` hands them (none before: calls pass through).
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
import types
from typing import Any

_STATE: Any = None  # the plugin's recording state, once `install` gives it


def install(state: Any) -> None:
    """From now on, calls of the wrapped targets are recorded into `state`."""
    global _STATE
    _STATE = state


def short_reason(exc: BaseException) -> str:
    """One line naming the failure; object addresses dropped so that equal causes count as one."""
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", f"{type(exc).__name__}: {exc}")
    return text.splitlines()[0][:120] if text else type(exc).__name__


def _recorder(key: str, fn: Any, skip_first: bool, rebuild: bool = False) -> Any:
    """A plain function that records and then calls `fn`."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        state = _STATE
        idle = None if state is None else state.let_be.get(key)
        if idle is not None:  # this test item is let be for this target: only counted
            idle[0].calls += 1
            idle[1].calls += 1
        elif state is not None and not state.busy:
            state.busy = True
            try:
                caller = sys._getframe(1)
                seen = args[1:] if skip_first else args
                if _has_generator(seen, kwargs):
                    first = 1 if skip_first else 0
                    return _consumed_call(state, key, fn, args, kwargs, first, (rebuild, caller))
                state.record(key, seen, kwargs, rebuild, caller)
            finally:
                state.busy = False
        return fn(*args, **kwargs)

    wrapper.__replicate_original__ = fn  # type: ignore[attr-defined]
    return wrapper


MAX_CONSUMED = 5_001  # items of a generator argument kept (past `looks_large`: dropped)


def _has_generator(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    return any(type(v) is types.GeneratorType for v in (*args, *kwargs.values()))


def _consuming(gen: Any, items: list[Any]) -> Any:
    """A generator yielding what `gen` yields, each item kept in `items` (to `MAX_CONSUMED`);
    what is sent or thrown into it is passed on, and closing it closes `gen`."""
    sent: Any = None
    thrown: BaseException | None = None
    while True:
        try:
            item = gen.send(sent) if thrown is None else gen.throw(thrown)
        except StopIteration as stop:
            return stop.value
        if len(items) < MAX_CONSUMED:
            items.append(item)
        sent, thrown = None, None
        try:
            sent = yield item
        except GeneratorExit:
            gen.close()
            raise
        except BaseException as exc:  # noqa: BLE001 - thrown in: passed on to `gen`
            thrown = exc


def _consumed_call(
    state: Any,
    key: str,
    fn: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    first: int,
    how: tuple[bool, Any],
) -> Any:
    """Call `fn` with each generator argument read through `_consuming`, and record the call
    with it replaced by an iterator over the items the call read (`state.record`).
    `first`: the arguments before the call's own (a classmethod's class); `how`: `record`'s
    `rebuild` and `caller`.  Called busy; the call itself runs idle (its own calls of targets
    are recorded)."""
    consumed: dict[Any, list[Any]] = {}
    call_args, call_kwargs = list(args), dict(kwargs)
    for n, value in enumerate(args[first:]):
        if type(value) is types.GeneratorType:
            call_args[n + first] = _consuming(value, consumed.setdefault(n, []))
    for name, value in kwargs.items():
        if type(value) is types.GeneratorType:
            call_kwargs[name] = _consuming(value, consumed.setdefault(name, []))
    pending = state.record(key, args[first:], kwargs, *how, consumed)
    state.busy = False
    try:
        return fn(*call_args, **call_kwargs)
    finally:
        state.busy = True
        if pending is not None:
            pending()


class _Proxy:
    """Stands in for a non-function callable (an lru_cache object, say) and forwards the rest."""

    def __init__(self, key: str, target: Any) -> None:
        object.__setattr__(self, "_rep_call", _recorder(key, target, False))
        object.__setattr__(self, "_rep_target", target)
        # Its own __module__/__doc__ (not this class's), so doctest still finds its examples.
        functools.update_wrapper(self, target)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return object.__getattribute__(self, "_rep_call")(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(object.__getattribute__(self, "_rep_target"), name)

    def __reduce__(self) -> Any:
        target = object.__getattribute__(self, "_rep_target")
        return (_resolve, (target.__module__, target.__qualname__))


def _resolve(module: str, qualname: str) -> Any:
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _replace_everywhere(original: Any, replacement: Any) -> None:
    """Point every loaded module's reference to `original` at `replacement`."""
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for name, value in list(namespace.items()):
            if value is original:
                namespace[name] = replacement


def _wrap_function(key: str, module: types.ModuleType, name: str) -> str:
    original = module.__dict__.get(name)
    if original is None:
        return "not defined at import"
    if isinstance(original, types.FunctionType):
        replacement: Any = _recorder(key, original, False)
    elif callable(original) and hasattr(original, "__qualname__"):
        replacement = _Proxy(key, original)
    else:
        return f"not callable ({type(original).__name__})"
    _replace_everywhere(original, replacement)
    return ""


def _wrap_method(key: str, owner: type, name: str, kind: str) -> str:
    raw = owner.__dict__.get(name)
    if raw is None:
        return "not defined in class at import"
    if kind == "staticmethod" and isinstance(raw, staticmethod):
        setattr(owner, name, staticmethod(_recorder(key, raw.__func__, False)))
    elif kind == "classmethod" and isinstance(raw, classmethod):
        setattr(owner, name, classmethod(_recorder(key, raw.__func__, True)))
    elif kind == "method" and isinstance(raw, types.FunctionType):
        # `self` before `__init__` is not built yet: rebuilding it would build it twice
        setattr(owner, name, _recorder(key, raw, False, rebuild=name != "__init__"))
    else:
        return f"unexpected class attribute ({type(raw).__name__})"
    return ""


def _init_of(cls: type) -> Any:
    """The `__init__` a class call of `cls` runs, found in the MRO's own dicts."""
    for klass in cls.__mro__:
        if "__init__" in klass.__dict__:
            return klass.__dict__["__init__"]
    return object.__init__


def remember_constructions(owner: type) -> None:
    """Wrap `owner`'s `__init__` (installing one that defers to the next in the MRO when it
    inherits one) so that each instance a class call builds remembers that call's arguments."""
    if type(owner).__call__ is not type.__call__ or not owner.__weakrefoffset__:
        return  # a class call that is not `__new__` + `__init__`; instances without weakrefs
    cls: Any = owner
    inner = owner.__dict__.get("__init__")
    if inner is None:
        if _init_of(owner) is object.__init__:
            return  # an `__init__` here would make object.__init__ refuse the call's arguments

        def inner(self: Any, *args: Any, **kwargs: Any) -> None:
            super(cls, self).__init__(*args, **kwargs)

        functools.update_wrapper(inner, _init_of(owner))
    elif not isinstance(inner, types.FunctionType):
        return
    name = f"{owner.__module__}.{owner.__qualname__}"

    @functools.wraps(inner)
    def remembering(self: Any, *args: Any, **kwargs: Any) -> Any:
        state = _STATE
        # only the class call's own `__init__`: not a subclass's `super().__init__(...)`
        if state is not None and not state.busy and _init_of(type(self)) is remembering:
            state.busy = True
            try:
                state.memory.remember(name, self, args, kwargs)
            finally:
                state.busy = False
        return inner(self, *args, **kwargs)

    owner.__init__ = remembering  # type: ignore[misc]


def wrap_target(target: dict[str, str]) -> str:
    """Wrap one target; return '' on success or the reason it could not be wrapped."""
    try:
        module = importlib.import_module(target["module"])
    except BaseException as exc:  # noqa: BLE001 - an import failure is a reason, not a crash
        return "module does not import: " + short_reason(exc)
    *outer, name = target["qualname"].split(".")
    if not outer:
        return _wrap_function(target["key"], module, name)
    owner = owner_of(module, target["qualname"])
    if owner is None:
        return "enclosing class not found"
    return _wrap_method(target["key"], owner, name, target["kind"])


def owner_of(module: Any, qualname: str) -> type | None:
    """The class in `module` that holds the method `qualname`."""
    for part in qualname.split(".")[:-1]:
        module = getattr(module, part, None)
    return module if isinstance(module, type) else None
