"""A test item that runs past the harvest's per-item limit is stopped and the suite goes on
(`harvest/item_limit.py` `TestTooLong`): pyparsing 3.1.4's `examples/test_bibparse.py` ran for over
ten minutes after its unit tests, with or without the recorder, and held the whole harvest.

The plugin runs for real (a pytest subprocess, no sandbox); the control is the same suite with
no limit, where the slow item runs its full time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from replicate.harvest.collect import _parse
from tests.integration.harvest.test_harvest_plugin import _run_plugin, edit_plugin

CORE = """
def keep(value):
    return value
"""

SLOW_S = 6.0

TESTS = f"""
import time

from pkg.core import keep


def test_slow_and_swallowing():
    end = time.monotonic() + {SLOW_S}
    while time.monotonic() < end:
        try:
            keep(1)
        except Exception:  # the limit is not an Exception: this does not keep the test going
            pass


def test_after():
    keep(2)
"""

FILES = {"pkg/__init__.py": "", "pkg/core.py": CORE, "tests/test_core.py": TESTS}
KEYS = {"pkg.core.keep": ("pkg.core", "keep", "function")}
SLOW = "tests/test_core.py::test_slow_and_swallowing"


def test_a_test_past_the_limit_is_stopped_and_the_next_one_recorded(tmp_path: Path) -> None:
    started = time.monotonic()
    cut = _run_plugin(tmp_path / "cut", FILES, KEYS, {"item_limit_s": 1.0})
    took = time.monotonic() - started
    assert took < SLOW_S, cut.log
    assert [args for args, _ in cut.calls("pkg.core.keep")] == [(1,), (2,)]
    (stopped,) = [r for r in cut.records if r["rec"] == "too_long"]
    assert stopped["tests"] == [SLOW] and stopped["limit_s"] == 1.0
    assert "1 failed, 1 passed" in cut.log
    note = _parse(tmp_path / "cut" / "harvest.jsonl", tmp_path / "cut" / "project").notes
    assert note == (
        "stopped 1 test item(s) at the per-item limit (1.0 s, halved after each one stopped), "
        f"their calls so far kept: {SLOW}",
    )


def test_without_a_limit_the_slow_test_runs_its_time(tmp_path: Path) -> None:
    started = time.monotonic()
    whole = _run_plugin(tmp_path / "whole", FILES, KEYS, {"item_limit_s": 0})
    assert time.monotonic() - started >= SLOW_S
    assert not [r for r in whole.records if r["rec"] == "too_long"]
    assert "2 passed" in whole.log


# The stop lands on an instruction without a line number, as a SIGALRM can (the clean-up code
# of a `with` or `finally`): the test adds such an entry to the stop's traceback and lets it go.
LINELESS = """
import sys
import types

from pkg.core import keep


def test_stopped_where_no_line_is():
    try:
        while True:
            keep(1)
    except BaseException as stop:
        tb = stop.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        tb.tb_next = types.TracebackType(None, sys._getframe(), 10**6, -1)  # tb_lineno: None
        raise


def test_after():
    keep(2)
"""


def test_a_stop_without_a_line_number_does_not_end_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {**FILES, "tests/test_core.py": LINELESS}
    stopped = "tests/test_core.py::test_stopped_where_no_line_is"
    kept = _run_plugin(tmp_path / "kept", files, KEYS, {"item_limit_s": 1.0})
    assert "1 failed, 1 passed" in kept.log and "INTERNALERROR" not in kept.log, kept.log
    assert [args for args, _ in kept.calls("pkg.core.keep")] == [(1,), (2,)]
    (record,) = [r for r in kept.records if r["rec"] == "too_long"]
    assert record["tests"] == [stopped]

    # the control: without the plugin's report hook, pytest's INTERNALERROR ends the session
    hook = "def pytest_runtest_makereport("
    edit_plugin(monkeypatch, "replicate_harvest.py", hook, "def _unhooked(")
    lost = _run_plugin(tmp_path / "lost", files, KEYS, {"item_limit_s": 1.0})
    assert "INTERNALERROR" in lost.log and "passed" not in lost.log, lost.log
    assert [args for args, _ in lost.calls("pkg.core.keep")] == [(1,)]
