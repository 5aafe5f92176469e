"""Bound methods passed as key functions are recorded by reference, and their targets minted.

The repository's tests pass `key=self.vowels` (a method of the running unittest `TestCase`, whose
state holds the running test's outcome, and through it pytest's session) and
`key=core.DEFAULT.score` (a method of an object the library's module holds, with a lock): neither
pickles by value, and both targets were dropped ("argument does not pickle: method"). Now the
first is the test case less its outcome, the second `keyed.core.DEFAULT.score` looked up again
on loading; `Scorer.score` itself, called on that default instance (built at import, so its
class call was never seen), gets `self` by that name too. The control ships the harvest with
those `self`s pickled by value, as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.gen.drop_classes import before_and_after

CORE = '''"""Words ranked by a key function."""

import threading


class Scorer:
    """Scores words by length and weight; shared between threads."""

    def __init__(self, weight):
        self.weight = weight
        self._lock = threading.Lock()

    def score(self, word):
        with self._lock:
            return len(word) * self.weight - word.count("a")


DEFAULT = Scorer(2)


def rank(words, key):
    """The words sorted by key, ties by the word itself."""
    return sorted(words, key=lambda word: (key(word), word))


def best(words, key):
    """The word of the largest key (the first of ties); None without words."""
    found = None
    for word in words:
        if found is None or key(word) > key(found):
            found = word
    return found
'''

TESTS = """import unittest

from keyed import core


class RankTest(unittest.TestCase):
    def vowels(self, word):
        return sum(c in "aeiou" for c in word)

    def test_rank(self):
        self.assertEqual(core.rank(["bob", "alice", "eve"], self.vowels), ["bob", "eve", "alice"])
        self.assertEqual(core.rank(["zz", "a", "ee", "b"], self.vowels), ["b", "zz", "a", "ee"])
        self.assertEqual(core.rank([], self.vowels), [])
        self.assertEqual(core.rank(["queue", "sky", "oo"], self.vowels), ["sky", "oo", "queue"])


def test_best():
    assert core.best(["a", "bb", "ccc"], core.DEFAULT.score) == "ccc"
    assert core.best(["aaaa", "bbb"], core.DEFAULT.score) == "bbb"
    assert core.best([], core.DEFAULT.score) is None
    assert core.best(["xy", "yx", "z"], core.DEFAULT.score) == "xy"
"""

FILES = {
    "pyproject.toml": '[project]\nname = "keyed"\nversion = "0.1.0"\n',
    "keyed/__init__.py": "",
    "keyed/core.py": CORE,
    "tests/test_core.py": TESTS,
}
SYMBOLS = ("keyed.core.rank", "keyed.core.best", "keyed.core.Scorer.score")
WITHOUT = {
    "replicate_harvest_by_value_pickler.py": ("elif id(obj) in self._selves:", "elif False:")
}


def test_targets_called_with_bound_methods_are_minted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, _ = before_and_after(tmp_path, FILES, WITHOUT, monkeypatch, SYMBOLS)
    assert before.kept(SYMBOLS) == []
    assert before.reasons(SYMBOLS) == {
        "keyed.core.rank": "argument does not pickle: method",
        "keyed.core.best": "argument does not pickle: method",
        "keyed.core.Scorer.score": "argument does not pickle: Scorer holding a lock",
    }
