"""A pytest plugin that records real calls to the targets while the repository's own tests run.

Standard library only: it is copied into the sandbox as `replicate_harvest.py` and loaded by the
repository's pytest with `-p replicate_harvest`.  It wraps each target (module functions in every
loaded module that refers to them, methods in their class) before collection, so calls from test
modules, doctests and the library itself all pass through the recorder.  Each call's arguments are
pickled BEFORE the call (a copy of their state); the call then runs unchanged.

Configuration: a JSON file named by $REPLICATE_HARVEST (see `HarvestConfig` on the trusted side).
Output: JSON lines appended to the configured file, flushed per record, so a crash keeps what was
recorded:
  {"rec": "call", "key": ..., "pickle_b64": ..., "origin": <test node id>}
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
        self.seen: set[tuple[str, str]] = set()
        self.drops: Counter[tuple[str, str]] = Counter()
        self.busy = False
        self.origin = ""

    def emit(self, record: dict[str, Any]) -> None:
        if self.out.closed:
            return
        try:
            self.out.write(json.dumps(record) + "\n")
            self.out.flush()
        except OSError:  # disk full or file-size limit: keep what is written, record no more
            self.out.close()

    def record(self, key: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if self.counts[key] >= self.max_per_target:
            return
        self.attempts[key] += 1
        if self.attempts[key] > ATTEMPTS_PER_KEPT * self.max_per_target:
            return  # mostly duplicates or drops: pickling more calls costs time and gains little
        if _looks_large(args, kwargs):
            self.drops[(key, "argument too large")] += 1
            return
        try:
            data = pickle.dumps((args, kwargs), protocol=4)
        except Exception as exc:  # noqa: BLE001 - any pickling failure is a drop reason
            self.drops[(key, "unpicklable argument: " + _short(exc))] += 1
            return
        if len(data) > self.max_bytes or self.spent[key] + len(data) > self.budget:
            self.drops[(key, "argument too large")] += 1
            return
        digest = hashlib.sha256(data).hexdigest()
        if (key, digest) in self.seen:
            return
        self.seen.add((key, digest))
        self.counts[key] += 1
        self.spent[key] += len(data)
        self.emit(
            {
                "rec": "call",
                "key": key,
                "pickle_b64": base64.b64encode(data).decode("ascii"),
                "origin": self.origin,
            }
        )


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


def _recorder(key: str, fn: Any, skip_first: bool) -> Any:
    """A plain function that records and then calls `fn`."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        state = _STATE
        if state is not None and not state.busy:
            state.busy = True
            try:
                state.record(key, args[1:] if skip_first else args, kwargs)
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
        setattr(owner, name, _recorder(key, raw, False))
    else:
        return f"unexpected class attribute ({type(raw).__name__})"
    return ""


def _wrap(target: dict[str, str]) -> str:
    """Wrap one target; return '' on success or the reason it could not be wrapped."""
    try:
        module = importlib.import_module(target["module"])
    except BaseException as exc:  # noqa: BLE001 - an import failure is a reason, not a crash
        return "module does not import: " + _short(exc)
    *outer, name = target["qualname"].split(".")
    if not outer:
        return _wrap_function(target["key"], module, name)
    owner: Any = module
    for part in outer:
        owner = getattr(owner, part, None)
    if not isinstance(owner, type):
        return "enclosing class not found"
    return _wrap_method(target["key"], owner, name, target["kind"])


def pytest_configure(config: Any) -> None:
    global _STATE
    path = os.environ.get("REPLICATE_HARVEST")
    if not path or _STATE is not None:
        return
    with open(path, encoding="utf-8") as handle:
        state = _Harvest(json.load(handle))
    for target in state.targets:
        reason = _wrap(target)
        state.emit({"rec": "wrap", "key": target["key"], "ok": not reason, "reason": reason})
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
