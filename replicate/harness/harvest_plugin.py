"""A pytest plugin that records real calls to the targets while the repository's own tests run.

Standard library only: it is copied into the sandbox as `replicate_harvest.py` and loaded by the
repository's pytest with `-p replicate_harvest`.  It wraps each target (module functions in every
loaded module that refers to them, methods in their class) before collection, so calls from test
modules, doctests and the library itself all pass through the recorder.  Each call's arguments are
pickled BEFORE the call (a copy of their state); the call then runs unchanged.

The classes of method targets remember, per live instance (weakly, bounded), the arguments of
the class call that built it, pickled then.  Every recorded method call carries that pickle
(``ctor_b64``), so the trusted side can vary `self` by varying those arguments.  A `self` that
does not pickle (it holds a lock its `__init__` made, say) is rebuilt: the call is recorded with
`self` replaced by a pickle whose loading calls `Class(*args, **kwargs)` (real class and stdlib
only: the jail has no plugin).

Configuration: a JSON file named by $REPLICATE_HARVEST (see `HarvestConfig` on the trusted side).
Output: JSON lines appended to the configured file, flushed per record, so a crash keeps what was
recorded:
  {"rec": "call", "key": ..., "pickle_b64": ..., "origin": <test node id>, "rebuilt": bool,
   "visible": bool, "ctor_b64": <pickled (args, kwargs) of the class call that built `self`,
   methods only>}
A call is `visible` when the frame that made it is test code (a file named like a test or a
conftest, or under a tests folder, below the directory pytest runs in) or a doctest: what an agent
can read in its workspace.  A call the library makes itself while a test runs is not.  A call
first recorded as not visible and later made again from a test is written again, visible (the
trusted side merges the two).
  {"rec": "drop", "key": ..., "reason": ..., "count": n}          (at session end)
  {"rec": "wrap", "key": ..., "ok": bool, "reason": ...}
  {"rec": "paths", "sys_path": [...]}                              (at session end)
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib
import json
import os
import pickle
import re
import sys
import types
import weakref
from collections import Counter
from typing import Any

_STATE: _Harvest | None = None


class _Harvest:
    def __init__(self, config: dict[str, Any]) -> None:
        self.targets: list[dict[str, str]] = config["targets"]
        self.max_per_target: int = int(config.get("max_per_target", 200))
        self.max_bytes: int = int(config.get("max_pickle_bytes", 65_536))
        self.budget: int = int(config.get("max_bytes_per_target", 4_000_000))
        self.spent: Counter[str] = Counter()
        self.attempts: Counter[str] = Counter()
        self.out = open(config["out"], "a", encoding="utf-8")  # noqa: SIM115
        self.counts: Counter[str] = Counter()
        self.seen: dict[tuple[str, str], bool] = {}  # whether a visible call was recorded
        self.written: dict[tuple[str, str], dict[str, Any]] = {}  # records of the others
        self.drops: Counter[tuple[str, str]] = Counter()
        self.busy = False
        self.origin = ""
        self.memory = _Memory(self.max_bytes, self.budget)

    def emit(self, record: dict[str, Any]) -> None:
        if self.out.closed:
            return
        try:
            self.out.write(json.dumps(record) + "\n")
            self.out.flush()
        except OSError:  # disk full or file-size limit: keep what is written, record no more
            self.out.close()

    def record(
        self,
        key: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        rebuild: bool = False,
        visible: bool = True,
    ) -> None:
        """Record one call; with `rebuild`, `args[0]` is a `self` that may be rebuilt; `visible`:
        the call was made from test code or a doctest."""
        if self.counts[key] >= self.max_per_target:
            return
        self.attempts[key] += 1
        if self.attempts[key] > ATTEMPTS_PER_KEPT * self.max_per_target:
            return  # mostly duplicates or drops: pickling more calls costs time and gains little
        if _looks_large(args, kwargs):
            self.drops[(key, "argument too large")] += 1
            return
        rebuilt = False
        try:
            data = pickle.dumps((args, kwargs), protocol=4)
        except Exception as exc:  # noqa: BLE001 - any pickling failure is a drop reason
            found = self.memory.rebuilt(args, kwargs) if rebuild else None
            if found is None:
                self.drops[(key, "unpicklable argument: " + _short(exc))] += 1
                return
            data, rebuilt = found, True
        if len(data) > self.max_bytes or self.spent[key] + len(data) > self.budget:
            self.drops[(key, "argument too large")] += 1
            return
        digest = hashlib.sha256(data).hexdigest()
        if not self._first_time(key, digest, visible):
            return
        ctor = self.memory.lookup(args[0], type(args[0])) if rebuild and args else None
        if ctor is not None and self.spent[key] + len(data) + len(ctor) > self.budget:
            ctor = None
        self.counts[key] += 1
        self.spent[key] += len(data) + len(ctor or b"")
        record = {
            "rec": "call",
            "key": key,
            "pickle_b64": base64.b64encode(data).decode("ascii"),
            "origin": self.origin,
            "rebuilt": rebuilt,
            "visible": visible,
        }
        if ctor is not None:
            record["ctor_b64"] = base64.b64encode(ctor).decode("ascii")
        if not visible:  # kept to write again if a test makes the same call itself
            self.written[(key, digest)] = record
        self.emit(record)

    def _first_time(self, key: str, digest: str, visible: bool) -> bool:
        """Whether the call was not recorded before; a repeat made from the tests of a call
        first recorded from the library is written again, visible."""
        seen = self.seen.get((key, digest))
        if seen is None:
            self.seen[(key, digest)] = visible
            return True
        if visible and not seen:
            self.seen[(key, digest)] = True
            self.emit({**self.written.pop((key, digest)), "visible": True})
        return False


ATTEMPTS_PER_KEPT = 3
LARGE_LEN = 5_000
_SIZED = (list, tuple, dict, set, frozenset, str, bytes, bytearray)


def _looks_large(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
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


def _short(exc: BaseException) -> str:
    """One line naming the failure; object addresses dropped so that equal causes count as one."""
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", f"{type(exc).__name__}: {exc}")
    return text.splitlines()[0][:120] if text else type(exc).__name__


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


class _Memory:
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
        if _looks_large(args, kwargs):
            return
        try:
            data = pickle.dumps((args, kwargs), protocol=4)
        except Exception:  # noqa: BLE001 - this instance cannot be rebuilt
            return
        if len(data) > self.max_bytes or self.spent[name] + len(data) > self.budget:
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


TEST_DIRS = frozenset({"tests", "test", "testing"})


def _from_tests(frame: Any) -> bool:
    """Whether the call was made by test code or a doctest: the first caller outside this
    plugin is in a test file (or a conftest, or under a tests folder) below the directory
    pytest runs in, or in a doctest."""
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    if frame is None:
        return False
    return _is_test_file(frame.f_code.co_filename, os.getcwd())


def _is_test_file(filename: str, root: str) -> bool:
    if filename.startswith("<doctest "):
        return True
    if filename.startswith("<") or not os.path.isabs(filename):
        return False
    rel = os.path.relpath(filename, root)
    if rel.startswith(".."):
        return False  # the standard library, site-packages, this plugin's own folder
    *folders, name = rel.split(os.sep)
    is_test = name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
    return is_test or any(folder in TEST_DIRS for folder in folders)


def _recorder(key: str, fn: Any, skip_first: bool, rebuild: bool = False) -> Any:
    """A plain function that records and then calls `fn`."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        state = _STATE
        if state is not None and not state.busy:
            state.busy = True
            try:
                visible = _from_tests(sys._getframe(1))
                state.record(key, args[1:] if skip_first else args, kwargs, rebuild, visible)
            finally:
                state.busy = False
        return fn(*args, **kwargs)

    wrapper.__replicate_original__ = fn  # type: ignore[attr-defined]
    return wrapper


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


def _remember_constructions(owner: type) -> None:
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


def _wrap(target: dict[str, str]) -> str:
    """Wrap one target; return '' on success or the reason it could not be wrapped."""
    try:
        module = importlib.import_module(target["module"])
    except BaseException as exc:  # noqa: BLE001 - an import failure is a reason, not a crash
        return "module does not import: " + _short(exc)
    *outer, name = target["qualname"].split(".")
    if not outer:
        return _wrap_function(target["key"], module, name)
    owner = _owner(module, target["qualname"])
    if owner is None:
        return "enclosing class not found"
    return _wrap_method(target["key"], owner, name, target["kind"])


def _owner(module: Any, qualname: str) -> type | None:
    """The class in `module` that holds the method `qualname`."""
    for part in qualname.split(".")[:-1]:
        module = getattr(module, part, None)
    return module if isinstance(module, type) else None


def pytest_configure(config: Any) -> None:
    global _STATE
    path = os.environ.get("REPLICATE_HARVEST")
    if not path or _STATE is not None:
        return
    with open(path, encoding="utf-8") as handle:
        state = _Harvest(json.load(handle))
    owners: dict[int, type] = {}
    for target in state.targets:
        reason = _wrap(target)
        state.emit({"rec": "wrap", "key": target["key"], "ok": not reason, "reason": reason})
        module = sys.modules.get(target["module"])
        owner = _owner(module, target["qualname"]) if target["kind"] == "method" else None
        if owner is not None and not reason:
            owners[id(owner)] = owner
    for owner in owners.values():
        _remember_constructions(owner)
    _STATE = state


def pytest_runtest_setup(item: Any) -> None:
    if _STATE is not None:
        _STATE.origin = str(getattr(item, "nodeid", ""))


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    state = _STATE
    if state is None:
        return
    for (key, reason), count in sorted(state.drops.items()):
        state.emit({"rec": "drop", "key": key, "reason": reason, "count": count})
    state.emit({"rec": "paths", "sys_path": [p for p in sys.path if isinstance(p, str)]})
    state.busy = True  # nothing more is recorded once the file is closed
    if not state.out.closed:
        state.out.close()
