"""A pytest plugin that records real calls to the targets while the repository's own tests run.

Standard library only: it is copied into the sandbox as `replicate_harvest.py` and loaded by the
repository's pytest with `-p replicate_harvest`.  It wraps each target (module functions in every
loaded module that refers to them, methods in their class) before collection, so calls from test
modules, doctests and the library itself all pass through the recorder.  Each call's arguments are
pickled BEFORE the call (a copy of their state); the call then runs unchanged.  What is worth
pickling, and the counts per target, are `replicate_harvest_budget.py`'s (shipped beside it, with
`replicate_harvest_rebuild.py`).

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
  {"rec": "drop", "key": ..., "reason": ..., "count": n, "detail": <the first failure's text>}
  {"rec": "stats", "key": ..., "calls": n, "distinct": n, "recorded": n, "dropped": n,
   "spent_in": <test during which the budget ran out, or "">, "tests": n, "busiest": <test id>,
   "busiest_calls": n, "stopped": {<why a test item was let be>: n}}   (both at session end)
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
import re
import sys
import types
from collections import Counter
from typing import Any

# Beside this file in the sandbox; part of the package when imported on the trusted side.
try:
    from .budget import (
        ATTEMPTS_PER_KEPT,
        STALE_CALLS,
        Tally,
        TestTally,
        plain_key,
        share_of,
        unpicklable,
    )
    from .byvalue import ByValue
    from .rebuild import Memory, dumps_capped, looks_large
except ImportError:
    from replicate_harvest_budget import (  # type: ignore[no-redef]
        ATTEMPTS_PER_KEPT,
        STALE_CALLS,
        Tally,
        TestTally,
        plain_key,
        share_of,
        unpicklable,
    )
    from replicate_harvest_byvalue import ByValue  # type: ignore[no-redef]
    from replicate_harvest_rebuild import (  # type: ignore[no-redef]
        Memory,
        dumps_capped,
        looks_large,
    )

_STATE: _Harvest | None = None


class _Harvest:
    def __init__(self, config: dict[str, Any]) -> None:
        self.targets: list[dict[str, str]] = config["targets"]
        self.max_per_target: int = int(config.get("max_per_target", 200))
        self.max_bytes: int = int(config.get("max_pickle_bytes", 65_536))
        self.budget: int = int(config.get("max_bytes_per_target", 4_000_000))
        # "attempts": the former budget (every call counts, no share per test), for comparison
        self.by_attempts = config.get("budget") == "attempts"
        self.share = self.max_per_target if self.by_attempts else share_of(self.max_per_target)
        self.out = open(config["out"], "a", encoding="utf-8")  # noqa: SIM115
        self.tallies: dict[str, Tally] = {}
        self.drops: Counter[tuple[str, str]] = Counter()
        self.details: dict[tuple[str, str], str] = {}  # the first failure of each drop reason
        self.busy = False
        self.origin = ""
        # targets whose calls the current test item no longer looks at (only counts them)
        self.let_be: dict[str, tuple[Tally, TestTally]] = {}
        self.memory = Memory(self.max_bytes, self.budget)
        root = os.getcwd()
        self.by_value = ByValue(config.get("by_value"), lambda f: _is_test_file(f, root))

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
        caller: Any = None,
    ) -> None:
        """Record one call; with `rebuild`, `args[0]` is a `self` that may be rebuilt; `caller`:
        the frame that made the call (whether it is test code is looked up only when needed)."""
        tally = self.tallies.get(key)
        if tally is None:
            tally = self.tallies[key] = Tally()
        tally.calls += 1
        test = tally.test(self.origin)
        test.calls += 1
        if test.stopped or not self._open(tally, test):
            self.let_be[key] = (tally, test)
            return
        ident = None if self.by_attempts else plain_key(args, kwargs)
        if ident is not None and not self._first_time(tally, test, ident, caller):
            return
        test.attempts += 1
        tally.attempts += 1
        data = self._pickled(key, args, kwargs, rebuild)
        if data is None:
            return
        pickled, rebuilt = data
        if ident is None:
            ident = hashlib.sha256(pickled).digest()
            if not self._first_time(tally, test, ident, caller):
                return
        ctor = self.memory.lookup(args[0], type(args[0])) if rebuild and args else None
        if ctor is not None and tally.bytes + len(pickled) + len(ctor) > self.budget:
            ctor = None
        tally.recorded += 1
        test.recorded += 1
        tally.bytes += len(pickled) + len(ctor or b"")
        record = {
            "rec": "call",
            "key": key,
            "pickle_b64": base64.b64encode(pickled).decode("ascii"),
            "origin": self.origin,
            "rebuilt": rebuilt,
            "visible": tally.seen[ident],
        }
        if ctor is not None:
            record["ctor_b64"] = base64.b64encode(ctor).decode("ascii")
        if not record["visible"]:  # kept to write again if a test makes the same call itself
            tally.written[ident] = record
        self.emit(record)

    def _open(self, tally: Tally, test: TestTally) -> bool:
        """Whether this call may still be looked at; closes the test item when it may not."""
        if tally.recorded >= self.max_per_target or (
            self.by_attempts and tally.attempts >= ATTEMPTS_PER_KEPT * self.max_per_target
        ):
            tally.spent_in = tally.spent_in or self.origin
            test.stopped = "budget spent"
        elif self.by_attempts:
            return True
        elif test.recorded >= self.share and tally.recorded >= self.max_per_target - self.share:
            test.stopped = "share used"  # past its share, and a share is left for later tests
        elif test.attempts >= ATTEMPTS_PER_KEPT * self.max_per_target:
            test.stopped = "attempts used"
        elif test.calls - test.last_new > STALE_CALLS:
            test.stopped = "repeats"
        return not test.stopped

    def _pickled(
        self, key: str, args: tuple[Any, ...], kwargs: dict[str, Any], rebuild: bool
    ) -> tuple[bytes, bool] | None:
        """The call's arguments pickled (and whether `self` was rebuilt), or None: dropped."""
        if looks_large(args, kwargs):
            self.drops[(key, "argument too large")] += 1
            return None
        rebuilt = False
        data: bytes | None
        try:
            data = dumps_capped((args, kwargs), self.max_bytes)  # None: past `max_bytes`
        except Exception as exc:  # noqa: BLE001 - any pickling failure is a drop reason
            found: tuple[bytes, bool] | None = None
            by_value = self.by_value.dumps((args, kwargs), protocol=4)
            if by_value is not None:
                found = (by_value, False)
            elif rebuild:
                made = self.memory.rebuilt(args, kwargs)
                found = (made, True) if made is not None else None
            if found is None:
                reason = "argument does not pickle: " + unpicklable(args, kwargs)
                self.drops[(key, reason)] += 1
                self.details.setdefault((key, reason), _short(exc))
                return None
            data, rebuilt = found
        else:
            # a pickle naming a test module would import it in the jail: by value instead
            if data is not None and self.by_value.names_tests(data):
                data = self.by_value.dumps((args, kwargs), protocol=4) or data
        if (
            data is None
            or len(data) > self.max_bytes
            or self.tallies[key].bytes + len(data) > self.budget
        ):
            self.drops[(key, "argument too large")] += 1
            return None
        return data, rebuilt

    def _first_time(self, tally: Tally, test: TestTally, ident: Any, caller: Any) -> bool:
        """Whether the call was not seen before; a repeat made from the tests of a call first
        recorded from the library is written again, visible."""
        seen = tally.seen.get(ident)
        if seen is None:
            tally.seen[ident] = _from_tests(caller)
            tally.distinct += 1
            test.last_new = test.calls
            return True
        if not seen and _from_tests(caller):
            tally.seen[ident] = True
            written = tally.written.pop(ident, None)
            if written is not None:
                self.emit({**written, "visible": True})
        return False

    def finish(self) -> None:
        """Write the drops and each called target's counts."""
        per_key: dict[str, Counter[str]] = {}
        for (key, reason), count in sorted(self.drops.items()):
            per_key.setdefault(key, Counter())[reason] = count
            detail = self.details.get((key, reason), "")
            self.emit(
                {"rec": "drop", "key": key, "reason": reason, "count": count, "detail": detail}
            )
        for key, tally in sorted(self.tallies.items()):
            self.emit(tally.stats(key, per_key.get(key, Counter())))


def _short(exc: BaseException) -> str:
    """One line naming the failure; object addresses dropped so that equal causes count as one."""
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", f"{type(exc).__name__}: {exc}")
    return text.splitlines()[0][:120] if text else type(exc).__name__


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


@functools.lru_cache(maxsize=4096)  # asked on every distinct call: of a few files, many times
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
        idle = None if state is None else state.let_be.get(key)
        if idle is not None:  # this test item is let be for this target: only counted
            idle[0].calls += 1
            idle[1].calls += 1
        elif state is not None and not state.busy:
            state.busy = True
            try:
                caller = sys._getframe(1)
                state.record(key, args[1:] if skip_first else args, kwargs, rebuild, caller)
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
        _STATE.let_be.clear()


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    state = _STATE
    if state is None:
        return
    state.finish()
    state.emit({"rec": "paths", "sys_path": [p for p in sys.path if isinstance(p, str)]})
    state.busy = True  # nothing more is recorded once the file is closed
    if not state.out.closed:
        state.out.close()
