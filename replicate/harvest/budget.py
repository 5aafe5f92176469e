"""The recording plugin's budget: which calls of a target are worth pickling, and its counts.

Standard library only: shipped beside the plugin as `replicate_harvest_budget.py`.

A target's budget counts DISTINCT calls, not attempts: a call whose arguments are plain values
(None, bools, numbers, strings, bytes and the builtin containers of those, bounded in size) is
told apart from the ones seen before by a cheap key, before anything is pickled; any other call
is pickled and told apart by its bytes.  A test item may record past its share of a target's
budget only while a share is left for the tests after it (so one hot loop cannot spend all of
it), and stops being looked at for that target once it has made `STALE_CALLS` calls in a row
without a new one or pickled `ATTEMPTS_PER_KEPT` x the budget: past that, a call costs a dict
lookup and two counter increments.  Calls whose arguments keep refusing to pickle are mostly
let go unpickled (`Refusals`).
"""

from __future__ import annotations

import pickle
import types
from collections import Counter
from typing import Any

SHARE = 4  # a test item's share: 1/SHARE of a target's budget, kept for the tests after it ...
SHARE_FLOOR = 25  # ... and never fewer than this many (nor more than the budget)
ATTEMPTS_PER_KEPT = 3  # calls a test item may pickle per call of the budget
STALE_CALLS = 1_000  # calls in a row without a new distinct one before a test item is let be
PLAIN_ITEMS = 200  # a plain key covers at most this many container items ...
PLAIN_LEN = 2_000  # ... and strings or bytes at most this long
REFUSALS_TRUSTED = 3  # calls of one shape refused in a row before the next are mostly not pickled
REFUSALS_MAX_GAP = 64  # ... each refusal doubling the calls let go before one is tried, to this

_ATOMS: dict[type, str] = {
    type(None): "n",
    bool: "?",
    int: "i",
    str: "s",
    bytes: "b",
}
_NOT_PLAIN = object()


def share_of(max_per_target: int) -> int:
    """What one test item may record of a target's budget, and what is kept for later tests."""
    return min(max_per_target, max(SHARE_FLOOR, max_per_target // SHARE))


def plain_key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A hashable key equal for equal plain arguments (types told apart: 1, 1.0 and True
    differ; one container passed in two places differs from two equal ones, as their pickles
    do), or None when an argument is not plain or too large to be cheap."""
    room = [PLAIN_ITEMS]
    seen: dict[int, int] = {}
    key = (_plain(args, room, seen), _plain(kwargs, room, seen))
    return None if _NOT_PLAIN in key else key


def _plain(value: Any, room: list[int], seen: dict[int, int]) -> Any:
    kind = type(value)
    tag = _ATOMS.get(kind)
    if tag is not None:
        if (kind is str or kind is bytes) and len(value) > PLAIN_LEN:
            return _NOT_PLAIN
        return (tag, value)
    if kind is float or kind is complex:
        return ("f", repr(value))  # nan equals itself, -0.0 differs from 0.0
    if kind in (tuple, list, dict, set, frozenset):
        if id(value) in seen:  # reached again: the same object (a list passed twice, say)
            return ("same", seen[id(value)])
        seen[id(value)] = len(seen)
        room[0] -= len(value)
        if room[0] < 0:
            return _NOT_PLAIN
        items = value.items() if kind is dict else value
        inner = tuple(_plain(v, room, seen) for v in items)
        if _NOT_PLAIN in inner:
            return _NOT_PLAIN
        return (kind.__name__, frozenset(inner) if kind in (set, frozenset) else inner)
    return _NOT_PLAIN


class TestTally:
    """One test item's calls of one target."""

    __slots__ = ("attempts", "calls", "last_new", "recorded", "stopped")

    def __init__(self) -> None:
        self.calls = 0
        self.recorded = 0
        self.attempts = 0
        self.last_new = 0  # `calls` when this test last made a new distinct call
        self.stopped = ""  # why this test is no longer looked at for the target


class Tally:
    """One target's counts over the session, and what was recorded of it."""

    def __init__(self) -> None:
        self.calls = 0
        self.distinct = 0
        self.recorded = 0
        self.attempts = 0  # pickled calls (the old budget counted these, duplicates too)
        self.bytes = 0
        self.spent_in = ""  # the test item during which the budget ran out
        self.tests: dict[str, TestTally] = {}
        self.seen: dict[Any, bool] = {}  # identity of a call -> whether a visible one was seen
        self.written: dict[Any, dict[str, Any]] = {}  # records of calls not (yet) visible

    def test(self, origin: str) -> TestTally:
        found = self.tests.get(origin)
        if found is None:
            found = self.tests[origin] = TestTally()
        return found

    def stats(self, key: str, drops: Counter[str]) -> dict[str, Any]:
        """The session-end record of this target."""
        busiest = max(self.tests.items(), key=lambda kv: kv[1].calls, default=("", TestTally()))
        stopped = Counter(t.stopped for t in self.tests.values() if t.stopped)
        return {
            "rec": "stats",
            "key": key,
            "calls": self.calls,
            "distinct": self.distinct,
            "recorded": self.recorded,
            "dropped": sum(drops.values()),
            "spent_in": self.spent_in,
            "tests": len(self.tests),
            "busiest": busiest[0],
            "busiest_calls": busiest[1].calls,
            "stopped": dict(stopped),
        }


class Refusals:
    """The calls of a target whose arguments did not pickle, by *shape* (the target and its
    arguments' types): after `REFUSALS_TRUSTED` refusals in a row, the calls of that shape are
    dropped for the same reason without being pickled, but for one now and then, after 1, 2, 4
    ... up to `REFUSALS_MAX_GAP` calls let go (each refusal doubling the wait); one that pickles
    forgets the shape's refusals.  pyparsing's tests pass their own test case (which holds the
    running test's outcome) as `self` to its assertion helpers: each call pickled ~660 KB before
    failing, 3,200 times, a quarter of its harvest."""

    def __init__(self) -> None:
        self._known: dict[Any, list[Any]] = {}  # shape -> [refusals, let go since a try, reason]

    def skip(self, shape: Any) -> str | None:
        """The reason to drop a call of this shape without pickling it, or None: try it."""
        found = self._known.get(shape) if shape is not None else None
        if found is None or found[0] < REFUSALS_TRUSTED:
            return None
        if found[1] >= min(REFUSALS_MAX_GAP, 2 ** (found[0] - REFUSALS_TRUSTED)):
            found[1] = 0
            return None
        found[1] += 1
        return str(found[2])

    def refused(self, shape: Any, reason: str) -> None:
        if shape is None:
            return
        found = self._known.setdefault(shape, [0, 0, reason])
        found[0] += 1
        found[2] = reason

    def pickled(self, shape: Any) -> None:
        self._known.pop(shape, None)


def shape_of(key: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A call's shape: its target and its arguments' types (`Refusals`); None when a type
    cannot be a key (its metaclass defines `__eq__` and no `__hash__`)."""
    shape = key, tuple(map(type, args)), tuple((name, type(v)) for name, v in kwargs.items())
    try:
        hash(shape)
    except Exception:  # noqa: BLE001 - a metaclass's own hash may raise anything
        return None
    return shape


def unpicklable(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """What in the arguments does not pickle, named by its type, looking one level in: an item
    of a builtin container, an attribute of an object (`Store holding a RLock`)."""
    for value in (*args, *kwargs.values()):
        if pickles(value):
            continue
        inner = _parts(value)
        bad = next((v for v in inner if not pickles(v)), None)
        if bad is None:
            return what(value)
        if type(value) in (list, tuple, set, frozenset, dict):
            return f"{what(bad)} in a {type(value).__name__}"
        return f"{what(value)} holding a {what(bad)}"
    return "the arguments together"


def _parts(value: Any) -> list[Any]:
    """A builtin container's items, or an object's attribute values (at most PLAIN_ITEMS)."""
    if type(value) in (list, tuple, set, frozenset):
        return list(value)[:PLAIN_ITEMS]
    if type(value) is dict:
        return list(value.values())[:PLAIN_ITEMS]
    try:
        attributes = object.__getattribute__(value, "__dict__")
    except Exception:  # noqa: BLE001 - no instance dict
        return []
    return list(attributes.values())[:PLAIN_ITEMS] if type(attributes) is dict else []


def pickles(value: Any) -> bool:
    try:
        pickle.dumps(value, protocol=4)
    except Exception:  # noqa: BLE001 - any failure means no
        return False
    return True


def what(value: Any) -> str:
    """A short name of a value's type: `lambda`, `local function`, `generator`, `Match`..."""
    local = "local " if "<locals>" in getattr(value, "__qualname__", "") else ""
    if isinstance(value, types.FunctionType):
        return local + ("lambda" if value.__name__ == "<lambda>" else "function")
    kind = type(value)
    local = "local " if "<locals>" in kind.__qualname__ else ""
    return local + kind.__qualname__.rsplit(".", 1)[-1]
