"""A pytest plugin that records real calls to the targets while the repository's own tests run.

Standard library only: it is copied into the sandbox as `replicate_harvest.py` and loaded by the
repository's pytest with `-p replicate_harvest`.  It wraps each target (module functions in every
loaded module that refers to them, methods in their class) before collection, so calls from test
modules, doctests and the library itself all pass through the recorder.  Each call's arguments are
pickled BEFORE the call (a copy of their state); the call then runs unchanged.  What is worth
pickling, and the counts per target, are `replicate_harvest_budget.py`'s (shipped beside it, with
`replicate_harvest_rebuild.py`, `replicate_harvest_by_value_pickler.py`,
`replicate_harvest_wrapping.py`, which wraps the targets, and `replicate_harvest_sequences.py`,
which records the call sequences of the configured ``classes``: its docstring says how).

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
  {"rec": "sequence", ...}, {"rec": "sequence_wrap", "key": <class>, "ok": bool, "reason": ...}
  {"rec": "paths", "sys_path": [...]}                              (at session end)
  {"rec": "too_long", "tests": [<test ids>], "limit_s": n}
      the test items stopped at the per-item limit ("item_limit_s"; at session end)
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import json
import os
import sys
from collections import Counter
from typing import Any

# Beside this file in the sandbox; part of the package when imported on the trusted side.
try:
    from .budget import (
        ATTEMPTS_PER_KEPT,
        STALE_CALLS,
        Refusals,
        Tally,
        TestTally,
        plain_key,
        shape_of,
        share_of,
        unpicklable,
    )
    from .by_value_pickler import ByValue
    from .item_limit import arm, disarm, exit_on_import, numbered
    from .rebuild import Memory, dumps_capped, looks_large, replayed
    from .sequences import Sequences
    from .test_code import from_tests, is_test_file, same_chance
    from .wrapping import install, owner_of, remember_constructions, short_reason, wrap_target
except ImportError:
    from replicate_harvest_budget import (  # type: ignore[no-redef]
        ATTEMPTS_PER_KEPT,
        STALE_CALLS,
        Refusals,
        Tally,
        TestTally,
        plain_key,
        shape_of,
        share_of,
        unpicklable,
    )
    from replicate_harvest_by_value_pickler import ByValue  # type: ignore[no-redef]
    from replicate_harvest_item_limit import (  # type: ignore[no-redef]
        arm,
        disarm,
        exit_on_import,
        numbered,
    )
    from replicate_harvest_rebuild import (  # type: ignore[no-redef]
        Memory,
        dumps_capped,
        looks_large,
        replayed,
    )
    from replicate_harvest_sequences import Sequences  # type: ignore[no-redef]
    from replicate_harvest_test_code import (  # type: ignore[no-redef]
        from_tests,
        is_test_file,
        same_chance,
    )
    from replicate_harvest_wrapping import (  # type: ignore[no-redef]
        install,
        owner_of,
        remember_constructions,
        short_reason,
        wrap_target,
    )

_STATE: _Harvest | None = None
ITEM_FLOOR_S = 5.0  # the per-item limit never falls below this
TOO_LARGE = "argument too large"


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
        self.refusals = Refusals()  # shapes of calls whose arguments keep refusing to pickle
        self.details: dict[tuple[str, str], str] = {}  # the first failure of each drop reason
        self.busy = False
        self.origin = ""
        # targets whose calls the current test item no longer looks at (only counts them)
        self.let_be: dict[str, tuple[Tally, TestTally]] = {}
        self.memory = Memory(self.max_bytes, self.budget)
        root = os.getcwd()
        self.by_value = ByValue(config.get("by_value"), lambda f: is_test_file(f, root))
        self.item_limit_s = float(config.get("item_limit_s", 0) or 0)
        self.too_long: list[str] = []  # the test items stopped at that limit
        self.sequences = Sequences(
            config, self, lambda value: dumps_capped(value, self.max_bytes), from_tests
        )

    def item_limit(self) -> float:
        """The limit on the next test item: halved for each item stopped so far, to a floor of
        `ITEM_FLOOR_S` (a suite whose state went wrong makes every item after it slow: pyparsing's
        bibparse examples, one after another)."""
        base = self.item_limit_s
        return max(min(base, ITEM_FLOOR_S), base / 2 ** len(self.too_long)) if base > 0 else 0.0

    def stopped(self) -> None:
        """The current test item is being stopped at the limit."""
        self.too_long.append(self.origin)

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
        consumed: dict[Any, list[Any]] | None = None,
    ) -> Any:
        """Record one call; with `rebuild`, `args[0]` is a `self` that may be rebuilt; `caller`:
        the frame that made the call (whether it is test code is looked up only when needed).
        With `consumed` (the slots that pass generators, and the items the call reads from
        each), the arguments are pickled now without them, and the function that records the
        call, once it returned, with an iterator over those items in each, is returned."""
        tally = self.tallies.get(key)
        if tally is None:
            tally = self.tallies[key] = Tally()
        tally.calls += 1
        test = tally.test(self.origin)
        test.calls += 1
        if test.stopped or not self._open(tally, test):
            self.let_be[key] = (tally, test)
            return None
        if consumed:
            args = tuple(None if n in consumed else v for n, v in enumerate(args))
            kwargs = {k: None if k in consumed else v for k, v in kwargs.items()}
        ident = None if self.by_attempts or consumed else plain_key(args, kwargs)
        if ident is not None and not self._first_time(tally, test, ident, caller):
            return None
        test.attempts += 1
        tally.attempts += 1
        data = self._pickled(key, args, kwargs, rebuild)
        if data is None or (consumed and data[1]):  # a rebuilt `self` would be built twice
            return None
        if not consumed:
            return self._keep(key, (tally, test), args, data, ident, rebuild, caller)
        return functools.partial(self._replay, key, (tally, test), args, data[0], consumed, caller)

    def _replay(
        self,
        key: str,
        tallies: tuple[Tally, TestTally],
        args: tuple[Any, ...],
        before: bytes,
        consumed: dict[Any, list[Any]],
        caller: Any,
    ) -> None:
        again = replayed(before, consumed)
        data = self._pickled(key, again[0], again[1], False)
        if data is not None:
            self._keep(key, tallies, args, data, None, False, caller)

    def _keep(
        self,
        key: str,
        tallies: tuple[Tally, TestTally],
        args: tuple[Any, ...],
        data: tuple[bytes, bool],
        ident: Any,
        rebuild: bool,
        caller: Any,
    ) -> None:
        """Write the call's record, unless it was seen before."""
        tally, test = tallies
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
            self.drops[(key, TOO_LARGE)] += 1
            return None
        shape = shape_of(key, args, kwargs)
        refused = self.refusals.skip(shape)
        if refused is not None:
            self.drops[(key, refused)] += 1
            return None
        rebuilt = False
        data: bytes | None
        try:
            data = dumps_capped((args, kwargs), self.max_bytes)  # None: past `max_bytes`
        except Exception as exc:  # noqa: BLE001 - any pickling failure is a drop reason
            found: tuple[bytes, bool] | None = None
            me = args[0] if rebuild and args else None
            by_value = self.by_value.dumps((args, kwargs), protocol=4, target_self=me)
            if by_value is not None:
                found = (by_value, False)
            elif rebuild:
                made = self.memory.rebuilt(args, kwargs)
                found = (made, True) if made is not None else None
            if found is None:
                reason = "argument does not pickle: " + unpicklable(args, kwargs)
                self.drops[(key, reason)] += 1
                self.details.setdefault((key, reason), short_reason(exc))
                self.refusals.refused(shape, reason)
                return None
            data, rebuilt = found
        else:
            # a pickle naming a test module would import it in the jail: by value instead
            if data is not None and self.by_value.names_tests(data):
                data = self.by_value.dumps((args, kwargs), protocol=4) or data
        if data is None or len(data) > self.max_bytes:  # too large is refused by shape too
            self.drops[(key, TOO_LARGE)] += 1
            self.refusals.refused(shape, TOO_LARGE)
            return None
        self.refusals.pickled(shape)
        if self.tallies[key].bytes + len(data) > self.budget:
            self.drops[(key, TOO_LARGE)] += 1
            return None
        return data, rebuilt

    def _first_time(self, tally: Tally, test: TestTally, ident: Any, caller: Any) -> bool:
        """Whether the call was not seen before; a repeat made from the tests of a call first
        recorded from the library is written again, visible."""
        seen = tally.seen.get(ident)
        if seen is None:
            tally.seen[ident] = from_tests(caller)
            tally.distinct += 1
            test.last_new = test.calls
            return True
        if not seen and from_tests(caller):
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
        if self.too_long:
            self.emit({"rec": "too_long", "tests": self.too_long, "limit_s": self.item_limit_s})


def pytest_configure(config: Any) -> None:
    global _STATE
    path = os.environ.get("REPLICATE_HARVEST")
    if not path or _STATE is not None:
        return
    with open(path, encoding="utf-8") as handle:
        state = _Harvest(json.load(handle))
    owners: dict[int, type] = {}
    for target in state.targets:
        reason = wrap_target(target)
        state.emit({"rec": "wrap", "key": target["key"], "ok": not reason, "reason": reason})
        module = sys.modules.get(target["module"])
        owner = owner_of(module, target["qualname"]) if target["kind"] == "method" else None
        if owner is not None and not reason:
            owners[id(owner)] = owner
    for entry in state.sequences.classes:  # before `remember_constructions` wraps `__init__`
        reason = state.sequences.wrap(entry)
        state.emit(
            {"rec": "sequence_wrap", "key": entry["key"], "ok": not reason, "reason": reason}
        )
    for owner in owners.values():
        remember_constructions(owner)
    _STATE = state
    install(state)


def pytest_runtest_setup(item: Any) -> None:
    if _STATE is not None:
        _STATE.origin = str(getattr(item, "nodeid", ""))
        _STATE.let_be.clear()
        same_chance(_STATE.origin)
        arm(_STATE.item_limit(), _STATE.stopped)


def pytest_runtest_makereport(item: Any, call: Any) -> None:
    """Before pytest reports a failure: no traceback entry without a line number (see
    `item_limit`), which would end the session."""
    if call.excinfo is not None:
        with contextlib.suppress(Exception):  # an exception object of odd make: reported as is
            numbered(call.excinfo.value)


pytest_make_collect_report = exit_on_import  # a module exiting on import fails alone


def pytest_runtest_teardown(item: Any) -> None:
    disarm()
    if _STATE is not None:
        _STATE.sequences.test_ended()


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    state = _STATE
    if state is None:
        return
    state.sequences.test_ended()
    state.finish()
    state.emit({"rec": "paths", "sys_path": [p for p in sys.path if isinstance(p, str)]})
    state.busy = True  # nothing more is recorded once the file is closed
    if not state.out.closed:
        state.out.close()
