"""Generators passed as arguments are recorded as the items the call read from them.

A generator does not pickle, so a target its tests call with generator expressions was dropped
("argument does not pickle: generator"). Now the harvest passes the target a generator that reads
the test's own (sending and throwing through), keeps what it yields during the call, and records
the call with an iterator over those items in its place (the other arguments as they were
before the call). The control ships the harvest without that.
"""

from __future__ import annotations

import base64
import pickle
from pathlib import Path

import pytest

from replicate.batch.store import Batch
from tests.integration.gen.drop_classes import before_and_after

CORE = '''"""Reading a stream of numbers."""


def take_until(numbers, stop):
    """The numbers before the first that is `stop` (the rest is left unread)."""
    taken = []
    for n in numbers:
        if n == stop:
            break
        taken.append(n)
    return taken


def running_max(numbers, into):
    """Append to `into` the running maximum of the numbers; return how many were read."""
    best = None
    count = 0
    for n in numbers:
        best = n if best is None or n > best else best
        into.append(best)
        count += 1
    return count
'''

TESTS = """from streams.core import running_max, take_until


def test_take_until():
    assert take_until((n * n for n in range(10)), 16) == [0, 1, 4, 9]
    assert take_until((n for n in [3, 1, 2]), 7) == [3, 1, 2]
    assert take_until((c for c in "abcabc"), "c") == ["a", "b"]
    squares = (n * n for n in range(5))
    assert take_until(squares, 1) == [0]
    assert list(squares) == [4, 9, 16]  # what the call left is the test's


def test_running_max():
    seen = [99]
    assert running_max((n % 5 for n in range(7, 12)), seen) == 5
    assert seen == [99, 2, 3, 4, 4, 4]
    assert running_max((x for x in []), []) == 0
    assert running_max(iter([1, 5, 2]), []) == 3
    assert running_max((-n for n in range(3)), [0]) == 3
"""

FILES = {
    "pyproject.toml": '[project]\nname = "streams"\nversion = "0.1.0"\n',
    "streams/__init__.py": "",
    "streams/core.py": CORE,
    "tests/test_core.py": TESTS,
}
SYMBOLS = ("streams.core.take_until", "streams.core.running_max")
WITHOUT = {"replicate_harvest_wrapping.py": ("if _has_generator(seen, kwargs):", "if False:")}


def test_targets_called_with_generators_are_minted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, after = before_and_after(tmp_path, FILES, WITHOUT, monkeypatch, SYMBOLS)
    assert before.kept(SYMBOLS) == []
    assert before.reasons(SYMBOLS) == {
        "streams.core.take_until": "argument does not pickle: generator",
        "streams.core.running_max": "fewer than 3 traced calls",  # the list iterator's only
    }
    traced = _traced(after.batch, "streams.core.take_until")
    assert ((iter_items([0, 1, 4, 9, 16]), 16), {}) in traced  # what the call read, 16 too
    assert ((iter_items([0, 1]), 1), {}) in traced  # not what it left (4, 9, 16)
    traced = _traced(after.batch, "streams.core.running_max")
    assert ((iter_items([2, 3, 4, 0, 1]), [99]), {}) in traced  # `into` as it was before


def iter_items(items: list[object]) -> tuple[str, list[object]]:
    return ("iterator", items)


def _traced(batch: Path, symbol: str) -> list[object]:
    """The traced calls of a task, an iterator argument shown as `("iterator", items)`."""
    found = []
    for item in Batch.open(batch).load(symbol).inputs:
        if item.provenance != "traced":
            continue
        args, kwargs = pickle.loads(base64.b64decode(item.pickle_b64))
        shown = [iter_items(list(a)) if type(a).__name__ == "list_iterator" else a for a in args]
        found.append((tuple(shown), kwargs))
    return found
