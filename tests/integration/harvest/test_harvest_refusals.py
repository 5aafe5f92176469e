"""Calls whose arguments keep refusing to pickle are mostly not pickled again (`Refusals` in
`harvest/budget.py`), and a call of the same shape that pickles later is still recorded.

The plugin runs for real (a pytest subprocess, no sandbox).  The argument counts the times it is
asked to pickle and the test writes the count out; the control is the plugin with the memory
taken out, where every call is pickled again."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.harvest.budget import REFUSALS_MAX_GAP
from tests.integration.harvest.test_harvest_plugin import _run_plugin, edit_plugin

CORE = """
def keep(value):
    return value
"""

TESTS = """
import os

from pkg.core import keep

TRIES = []


class Stubborn:
    picklable = False

    def __init__(self, number):
        self.number = number

    def __reduce_ex__(self, protocol):
        TRIES.append(1)
        if not Stubborn.picklable:
            raise TypeError("not today")
        return (int, (self.number,))


def test_refusing_then_pickling():
    for number in range(300):
        keep(Stubborn(number))
    with open(os.environ["MARKER"], "w") as out:
        out.write(str(len(TRIES)))
    Stubborn.picklable = True
    for number in range(1000, 1200):
        keep(Stubborn(number))
"""

FILES = {"pkg/__init__.py": "", "pkg/core.py": CORE, "tests/test_core.py": TESTS}
KEYS = {"pkg.core.keep": ("pkg.core", "keep", "function")}
SETTINGS = {"max_per_target": 200, "item_limit_s": 0}


def test_refused_shapes_are_mostly_let_go_and_a_later_pickle_is_kept(tmp_path: Path) -> None:
    harvest = _run_plugin(tmp_path / "kept", FILES, KEYS, SETTINGS)
    assert "1 passed" in harvest.log, harvest.log
    assert int(harvest.marker.read_text()) < 100  # of the 300 refused calls, 12 tried
    recorded = [args[0] for args, _ in harvest.calls("pkg.core.keep")]
    assert recorded[0] <= 1000 + REFUSALS_MAX_GAP and len(recorded) >= 100  # tried again, kept
    (drop,) = [r for r in harvest.records if r["rec"] == "drop"]
    assert drop["reason"] == "argument does not pickle: Stubborn"
    assert 300 <= drop["count"] <= 300 + REFUSALS_MAX_GAP  # those let go count as refused


def test_the_control_without_the_memory_every_refused_call_is_pickled_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = "replicate_harvest_budget.py"
    edit_plugin(monkeypatch, budget, "\nREFUSALS_TRUSTED = 3 ", "\nREFUSALS_TRUSTED = 10**9 ")
    harvest = _run_plugin(tmp_path / "all", FILES, KEYS, SETTINGS)
    assert "1 passed" in harvest.log, harvest.log
    assert int(harvest.marker.read_text()) >= 2 * 300  # each call: pickle, then what refused
    recorded = [args[0] for args, _ in harvest.calls("pkg.core.keep")]
    assert recorded[0] == 1000


LARGE_TESTS = """
import os

from pkg.core import keep

TRIES = []


class Bulky:
    big = True

    def __init__(self, number):
        self.number = number

    def __reduce_ex__(self, protocol):
        TRIES.append(1)
        if Bulky.big:
            return (bytes, (b"x" * 100_000,))  # past the harvest's size limit
        return (int, (self.number,))


def test_too_large_then_small():
    for number in range(300):
        keep(Bulky(number))
    with open(os.environ["MARKER"], "w") as out:
        out.write(str(len(TRIES)))
    Bulky.big = False
    for number in range(1000, 1200):
        keep(Bulky(number))
"""

LARGE_FILES = {**FILES, "tests/test_core.py": LARGE_TESTS}


def test_too_large_shapes_are_mostly_let_go_too(tmp_path: Path) -> None:
    """A shape whose arguments keep passing the size limit is let go as a refused one is (parso's
    tree nodes hold their whole tree: each call pickled 64 KB before it was dropped)."""
    harvest = _run_plugin(tmp_path / "large", LARGE_FILES, KEYS, SETTINGS)
    assert "1 passed" in harvest.log, harvest.log
    assert int(harvest.marker.read_text()) < 100
    recorded = [args[0] for args, _ in harvest.calls("pkg.core.keep")]
    assert recorded[0] <= 1000 + REFUSALS_MAX_GAP and len(recorded) >= 100
    (drop,) = [r for r in harvest.records if r["rec"] == "drop"]
    assert drop["reason"] == "argument too large"
    assert 300 <= drop["count"] <= 300 + REFUSALS_MAX_GAP


def test_the_control_every_too_large_call_is_pickled_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = "replicate_harvest_budget.py"
    edit_plugin(monkeypatch, budget, "\nREFUSALS_TRUSTED = 3 ", "\nREFUSALS_TRUSTED = 10**9 ")
    harvest = _run_plugin(tmp_path / "all", LARGE_FILES, KEYS, SETTINGS)
    assert int(harvest.marker.read_text()) >= 300
