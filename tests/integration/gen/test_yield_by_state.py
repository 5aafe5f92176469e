"""Objects of a class a function makes, without a value equality, compare by their state.

A factory's local class (`make_tally.<locals>.Tally`) has no importable name, so its name does
not verify and an outcome holding one of its instances was "outcome not comparable": the target
was dropped. Now, when the class defines no `__eq__`, its instances are named `<by state>` and
the name the class claims, and compare by that name and their fields (an `__eq__` of its own
keeps the old name: its equality is the class's to say). The control starts the jails with a
runner that names them as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.batch.store import Batch
from replicate.cache import cache_root
from replicate.grading.grader import grade_text
from replicate.jail import Jail
from replicate.jail.context import context_for
from replicate.sandbox import get_sandbox
from tests.integration.gen.drop_classes import before_and_after

CORE = '''"""Tallies of words, kept in objects made by a factory."""


def make_tally(kind):
    class Tally:
        def __init__(self):
            self.kind = kind
            self.counts = {}
            self.order = []

        def add(self, word):
            if word not in self.counts:
                self.order.append(word)
            self.counts[word] = self.counts.get(word, 0) + 1

    return Tally


def make_pair(kind):
    class Pair:
        __slots__ = ("left", "right")

        def __init__(self, left, right):
            self.left, self.right = left, right

        def __eq__(self, other):
            return self.left == other.left

    return Pair


def tally(words, kind="words"):
    """A tally of the words, in order of first sight."""
    found = make_tally(kind)()
    for word in words:
        found.add(word.lower())
    return found


def halves(word):
    """The word's two halves, in a pair."""
    middle = len(word) // 2
    return make_pair("halves")(word[:middle], word[middle:])
'''

TESTS = """from tally.core import halves, tally


def test_tally():
    found = tally(["a", "B", "b", "c"])
    assert found.counts == {"a": 1, "b": 2, "c": 1} and found.order == ["a", "b", "c"]
    assert tally([]).counts == {}
    assert tally(["x", "X", "y"], kind="letters").kind == "letters"
    assert tally(["Hi", "hi", "HI", "ho"]).order == ["hi", "ho"]


def test_halves():
    assert halves("abcd").left == "ab"
    assert halves("abc").right == "bc"
    assert halves("").left == ""
"""

FILES = {
    "pyproject.toml": '[project]\nname = "tally"\nversion = "0.1.0"\n',
    "tally/__init__.py": "",
    "tally/core.py": CORE,
    "tests/test_core.py": TESTS,
}
TALLY, HALVES = "tally.core.tally", "tally.core.halves"
WRONG = """
def tally(words, kind="words"):
    found = make_tally(kind)()
    for word in words:
        found.add(word)
    return found
"""


def test_objects_without_a_value_equality_compare_by_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, after = before_and_after(
        tmp_path, FILES, {}, monkeypatch, (TALLY,), runner=("state_type_name(t, name)", "name")
    )
    assert before.reasons((TALLY,)) == {TALLY: "outcome not comparable"}
    assert "(<unverified>tally.core.make_tally.<locals>.Tally(" in before.entries[TALLY]["detail"]
    # a class with an `__eq__` of its own is still not compared by its state
    assert after.reasons((HALVES,)) == {HALVES: "outcome not comparable"}
    # a candidate whose objects differ in their state (words not lower-cased) is told apart
    task = Batch.open(after.batch).load(TALLY)
    jail = Jail(context_for(task.repo, cache_root()), get_sandbox("local"))
    wrong = grade_text(task, WRONG, jail)
    assert wrong.reward is not None and wrong.reward < 1.0
    assert wrong.counterexample is not None and "counts" in str(wrong.counterexample.detail)
