"""Recording call sequences: for each live instance of a chosen class, the calls the tests made
on it, in order (its class call, its methods, the dunder methods the class defines).

Standard library only: shipped beside the plugin as `replicate_harvest_sequences.py`.  Every
function in the class's own dict is wrapped (but the ones pickling, copying state and attribute
access run through, `UNRECORDED`); a call is a step only when made on an instance of exactly
that class whose class call was recorded, and not from inside another recorded call (a method
calling another is one step).  Each step's arguments are pickled before it runs, its result (or
the exception it raised) after: one that does not pickle ends the sequence there, the steps
before it kept.  An argument that is the very object an earlier step returned (or the instance
itself) is recorded as such too, in the step's ``refs``: ``[slot, step index]`` (index 0: the
instance), so a replay feeds that object back rather than a copy.  Bounded: `max_steps` steps
per sequence, `max_sequences` sequences per class, of which one test item starts at most a
quarter (the rest kept for the tests after it).  A
sequence is written when it ends: at its step limit, at a step that does not pickle, or when
the test item that made it ends (the instance is held until then, so its id is not reused).
  {"rec": "sequence", "key": ..., "origin": <test id>, "visible": bool, "ending": ...,
   "steps": [{"name", "args_b64", "outcome": "returned"|"raised"|"self", "result_b64",
              "refs": [[position or keyword, step index], ...] (only when there are any)}]}
"""

from __future__ import annotations

import base64
import functools
import importlib
import sys
import types
from collections.abc import Callable
from typing import Any

UNRECORDED = frozenset(
    {
        "__new__", "__init_subclass__", "__class_getitem__", "__del__", "__getattribute__",
        "__getattr__", "__setattr__", "__delattr__", "__reduce__", "__reduce_ex__",
        "__getstate__", "__setstate__", "__getnewargs__", "__getnewargs_ex__", "__copy__",
        "__deepcopy__", "__sizeof__", "__dir__", "__repr__", "__hash__",
    }
)  # fmt: skip
SHARE = 4  # one test item starts at most 1/SHARE of a class's sequences
# An argument of these types is never taken for an earlier step's result: equal values of them
# are often one object (small ints, interned strings) without the test having fed one back.
_NO_IDENTITY = (type(None), bool, int, float, complex, str, bytes)


class _Open:
    """A sequence being recorded: its instance (held), where it came from, its steps so far."""

    __slots__ = ("instance", "key", "origin", "results", "steps", "visible")

    def __init__(self, key: str, instance: Any, origin: str, visible: bool) -> None:
        self.key, self.instance, self.origin, self.visible = key, instance, origin, visible
        self.steps: list[dict[str, Any]] = []
        self.results: list[Any] = [instance]  # per step, what it returned (held till the end)

    def refs(self, args: Any, kwargs: Any) -> list[list[Any]]:
        """The arguments that are an earlier step's very result: ``[slot, step index]``."""
        found: list[list[Any]] = []
        for slot, value in [*enumerate(args), *kwargs.items()]:
            if isinstance(value, _NO_IDENTITY):
                continue
            for n, result in enumerate(self.results):
                if result is value:
                    found.append([slot, n])
                    break
        return found


class Sequences:
    """The recorder of every chosen class's sequences; `state`: the plugin's (its `busy` flag,
    `by_value`, `emit`, `origin`), `dumps`: pickling capped at `max_bytes` (None past it),
    `from_tests`: whether a frame is test code (the harvest's own frames above it passed over:
    the plugin's wrappers of `__init__` may stand between)."""

    def __init__(self, config: dict[str, Any], state: Any, dumps: Any, from_tests: Any) -> None:
        self.classes: list[dict[str, str]] = list(config.get("classes", []))
        self.max_steps = int(config.get("max_steps", 100))
        self.max_sequences = int(config.get("max_sequences", 40))
        self.share = max(1, self.max_sequences // SHARE)
        self.state, self.dumps, self.from_tests = state, dumps, from_tests
        self.live: dict[int, _Open] = {}
        self.started: dict[str, int] = {}  # sequences started per class
        self.in_test: dict[str, int] = {}  # ... by the current test item
        self.depth = 0  # inside a recorded call: calls it makes are not steps

    def wrap(self, entry: dict[str, str]) -> str:
        """Wrap one class's functions; '' or the reason it could not be."""
        try:
            owner: Any = importlib.import_module(entry["module"])
        except BaseException:  # noqa: BLE001 - an import failure is a reason, not a crash
            return "module does not import"
        for part in entry["qualname"].split("."):
            owner = getattr(owner, part, None)
        if not isinstance(owner, type):
            return "class not found"
        if not isinstance(owner.__dict__.get("__init__"), types.FunctionType):
            return "no __init__ of its own"
        for name, raw in list(owner.__dict__.items()):
            if isinstance(raw, types.FunctionType) and name not in UNRECORDED:
                make = self._constructor if name == "__init__" else self._step
                setattr(owner, name, make(entry["key"], owner, name, raw))
        return ""

    def _constructor(self, key: str, owner: type, name: str, fn: Any) -> Callable[..., Any]:
        @functools.wraps(fn)
        def init(this: Any, *args: Any, **kwargs: Any) -> Any:
            if type(this) is not owner or self.depth or self.state.busy or not self._may_start(key):
                return fn(this, *args, **kwargs)
            blob = self._pickled((args, kwargs))
            if blob is None:
                return fn(this, *args, **kwargs)
            self.started[key] = self.started.get(key, 0) + 1
            self.in_test[key] = self.in_test.get(key, 0) + 1
            opened = _Open(key, this, self.state.origin, bool(self.from_tests(sys._getframe(1))))
            try:
                value = self._run(fn, this, args, kwargs)
            except Exception as exc:
                self._add(opened, name, blob, "raised", exc)
                self._close(opened, "construction raised")
                raise
            if self._add(opened, name, blob, "returned", value):
                self.live[id(this)] = opened
            return value

        return init

    def _step(self, key: str, owner: type, name: str, fn: Any) -> Callable[..., Any]:
        @functools.wraps(fn)
        def step(this: Any, *args: Any, **kwargs: Any) -> Any:
            opened = None if self.depth or self.state.busy else self.live.get(id(this))
            if opened is None or opened.instance is not this:
                return fn(this, *args, **kwargs)
            blob = self._pickled((args, kwargs))
            if blob is None:
                self._close(opened, "unpicklable")
                return fn(this, *args, **kwargs)
            refs = opened.refs(args, kwargs)
            try:
                value = self._run(fn, this, args, kwargs)
            except Exception as exc:
                self._add(opened, name, blob, "raised", exc, refs)
                raise
            self._add(opened, name, blob, "self" if value is this else "returned", value, refs)
            return value

        return step

    def _run(self, fn: Any, this: Any, args: Any, kwargs: Any) -> Any:
        self.depth += 1
        try:
            return fn(this, *args, **kwargs)
        finally:
            self.depth -= 1

    def _may_start(self, key: str) -> bool:
        return (
            self.started.get(key, 0) < self.max_sequences and self.in_test.get(key, 0) < self.share
        )

    def _add(
        self,
        opened: _Open,
        name: str,
        blob: bytes,
        outcome: str,
        value: Any,
        refs: list[list[Any]] | None = None,
    ) -> bool:
        """Add a step; False (the sequence closed) when its result does not pickle."""
        result = b"" if outcome == "self" else self._pickled(value)
        if result is None:
            self._close(opened, "unpicklable")
            return False
        step: dict[str, Any] = {
            "name": name, "args_b64": _b64(blob), "outcome": outcome, "result_b64": _b64(result)
        }  # fmt: skip
        if refs:
            step["refs"] = refs
        opened.steps.append(step)
        if len(opened.steps) > 1:  # the class call's result is the instance, already held
            opened.results.append(None if outcome == "raised" else value)
        if len(opened.steps) >= self.max_steps:
            self._close(opened, "step limit")
            return False
        return True

    def _pickled(self, value: Any) -> bytes | None:
        state = self.state
        state.busy = True  # pickling may call the class's own methods: not steps, not calls
        try:
            try:
                data = self.dumps(value)
            except Exception:  # noqa: BLE001 - whatever pickling raises: by value, else none
                return state.by_value.dumps(value, protocol=4)
            if data is not None and state.by_value.names_tests(data):
                data = state.by_value.dumps(value, protocol=4) or data
            return data
        finally:
            state.busy = False

    def _close(self, opened: _Open, ending: str) -> None:
        if self.live.get(id(opened.instance)) is opened:
            del self.live[id(opened.instance)]
        if opened.steps:
            self.state.emit(
                {
                    "rec": "sequence",
                    "key": opened.key,
                    "origin": opened.origin,
                    "visible": opened.visible,
                    "ending": ending,
                    "steps": opened.steps,
                }
            )
        opened.steps = []

    def test_ended(self) -> None:
        """The current test item ended: its sequences are written, its share renewed."""
        for opened in list(self.live.values()):
            self._close(opened, "test ended")
        self.live.clear()
        self.in_test.clear()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
