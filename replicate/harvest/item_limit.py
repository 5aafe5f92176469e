"""The harvest's per-item limit: a test item that runs too long is stopped, and the suite goes on.

Standard library only: shipped beside the plugin as `replicate_harvest_item_limit.py`.

The stop is an exception raised by a SIGALRM handler, so it lands on whatever instruction the test
was running, and since Python 3.11 some instructions have no line number (the clean-up code of a
`with` or a `finally`, say): the traceback then holds an entry whose `tb_lineno` is None.  pytest
reads every entry's line to report the failure and, on None, fails with an INTERNALERROR that ends
the whole session, so the tests after it never run (a pyparsing 3.1.4 harvest ended in one).
`numbered` takes such entries out of a failure's tracebacks before pytest reports it.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Generator
from types import TracebackType
from typing import Any


class TestTooLong(BaseException):
    """Raised in a test item that runs past the harvest's per-item limit.  A BaseException, so
    the test's own `except Exception` lets it through; pytest reports the item failed and goes
    on to the next, and the calls it made so far stay recorded.  One test can otherwise hold the
    whole harvest (pyparsing 3.1.4: after its unit tests, `examples/test_bibparse.py` ran for
    over ten minutes, with or without the recorder; alone, a tenth of a second)."""


_ALARM: dict[str, Any] = {}


def arm(limit_s: float, on_stop: Callable[[], None]) -> None:
    """Stop the coming test item (setup and call) after `limit_s` seconds (0: never); `on_stop`
    is called as it is stopped."""
    if limit_s <= 0:
        return
    try:
        _ALARM["previous"] = signal.signal(signal.SIGALRM, _too_long)
    except (ValueError, OSError):  # not the main thread: no limit
        return
    _ALARM["limit_s"] = limit_s
    _ALARM["on_stop"] = on_stop
    signal.setitimer(signal.ITIMER_REAL, limit_s)


def _too_long(signum: int, frame: Any) -> None:
    _ALARM["on_stop"]()
    raise TestTooLong(f"stopped by the harvest after {_ALARM.get('limit_s'):g} s")


def disarm() -> None:
    """No limit on teardown; the handler there before ours back, unless the test replaced ours
    (a timeout plugin of its own, say)."""
    if "previous" not in _ALARM:
        return
    previous = _ALARM.pop("previous")
    if signal.getsignal(signal.SIGALRM) is _too_long:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def numbered(error: BaseException) -> None:
    """Take the entries without a line number out of the tracebacks of `error`, of the
    exceptions chained to it and of those a group holds (in place: pytest holds the same
    traceback objects)."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [error]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        current.__traceback__ = _numbered(current.__traceback__)
        todo += [current.__cause__, current.__context__]
        if isinstance(current, BaseExceptionGroup):
            todo += current.exceptions


def _numbered(tb: TracebackType | None) -> TracebackType | None:
    while tb is not None and tb.tb_lineno is None:
        tb = tb.tb_next
    node = tb
    while node is not None:
        after = node.tb_next
        while after is not None and after.tb_lineno is None:
            after = after.tb_next
        node.tb_next = after
        node = after
    return tb


def exit_on_import(collector: Any) -> Generator[None, Any, None]:
    """Around `pytest_make_collect_report`: a module that calls `sys.exit` as it is imported (a
    script at the root, collected for its doctests: simplejson 4.3.0's `tsan_stress_simplejson.py`
    exits when its C extension is missing) fails its own collection, as an import error does.
    pytest lets a SystemExit in collection through, and it ended the whole session before any
    test ran (INTERNALERROR: every target "not called by the tests")."""
    outcome = yield
    error = (getattr(outcome, "excinfo", None) or (None, None))[1]
    reports = sys.modules.get("_pytest.reports")  # pytest's, loaded: this runs inside it
    if isinstance(error, SystemExit) and reports is not None:
        said = f"{collector.nodeid}: SystemExit({error.code!r}) while it was imported"
        outcome.force_result(reports.CollectReport(collector.nodeid, "failed", said, []))


# pytest's marker for a hook wrapper, written out (pluggy's HookimplMarker sets just this): the
# shipped files import nothing but the standard library.
exit_on_import.pytest_impl = {  # type: ignore[attr-defined]
    "hookwrapper": True,
    "wrapper": False,
    "optionalhook": False,
    "tryfirst": False,
    "trylast": False,
    "specname": None,
}
