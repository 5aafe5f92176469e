"""Objects of a class a function makes compare by their state, where their state decides
their equality.

A factory's local class (`make_tally.<locals>.Tally`) has no importable name, so its name does
not verify and an outcome holding one of its instances was "outcome not comparable": the target
was dropped. Now, when the class defines no `__eq__` (grader 8), or its own `__eq__` says an
object equals a copy rebuilt from its fields (grader 9: `make_pair`'s, which reads `left`
only), its instances are named `<by state>` and the name the class claims, and compare by that
name and all their fields. An `__eq__` by identity (`make_handle`'s) is not its fields': its
target stays "outcome not comparable", the detail says why. The control starts the jails with a
runner that names them as before grader 8.
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


def make_handle():
    class Handle:
        def __init__(self, name):
            self.name = name

        def __eq__(self, other):
            return self is other  # one handle per resource: equal to itself alone

        __hash__ = object.__hash__

    return Handle


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


def handle(name):
    """A handle on the named resource."""
    return make_handle()(name.strip().lower())
'''

TESTS = """from tally.core import halves, handle, tally


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


def test_handle():
    assert handle(" A ").name == "a"
    assert handle("b").name == "b"
    assert handle("Cc").name == "cc"
"""

FILES = {
    "pyproject.toml": '[project]\nname = "tally"\nversion = "0.1.0"\n',
    "tally/__init__.py": "",
    "tally/core.py": CORE,
    "tests/test_core.py": TESTS,
}
NOT_COMPARABLE = "outcome not comparable"
TALLY, HALVES, HANDLE = "tally.core.tally", "tally.core.halves", "tally.core.handle"
WRONG_HALF = """
def halves(word):
    middle = len(word) // 2
    return make_pair("halves")(word[:middle], word[middle + 1 :])
"""
WRONG = """
def tally(words, kind="words"):
    found = make_tally(kind)()
    for word in words:
        found.add(word)
    return found
"""


def test_objects_compare_by_state_where_it_decides_their_equality(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, after = before_and_after(
        tmp_path,
        FILES,
        {},
        monkeypatch,
        (TALLY, HALVES),
        runner=("state_type_name(x, t, name, lay.members, lay.dict_desc)", "name"),
    )
    assert before.reasons((TALLY, HALVES)) == dict.fromkeys((TALLY, HALVES), NOT_COMPARABLE)
    assert "(<unverified>tally.core.make_tally.<locals>.Tally(" in before.entries[TALLY]["detail"]
    assert "(<unverified>tally.core.make_pair.<locals>.Pair(" in before.entries[HALVES]["detail"]
    # an `__eq__` by identity is not its fields': not compared by them, and said so
    assert after.reasons((HANDLE,)) == {HANDLE: NOT_COMPARABLE}
    said = "(<unverified><__eq__ not by its fields>tally.core.make_handle.<locals>.Handle("
    assert said in after.entries[HANDLE]["detail"]
    # candidates whose objects differ in their state are told apart: words not lower-cased;
    # a pair whose `right` differs, which `Pair.__eq__` does not read
    tasks = Batch.open(after.batch)
    for symbol, source, field in ((TALLY, WRONG, "counts"), (HALVES, WRONG_HALF, "right")):
        task = tasks.load(symbol)
        jail = Jail(context_for(task.repo, cache_root()), get_sandbox("local"))
        wrong = grade_text(task, source, jail)
        assert wrong.reward is not None and wrong.reward < 1.0
        assert wrong.counterexample is not None and field in str(wrong.counterexample.detail)
