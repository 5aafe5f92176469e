"""A package's `tests.py`, which unittest's discovery runs and pytest's names miss, is run by the
harvest and is not itself a source of targets.

Shaped like titlecase 2.4.1 and jsonpointer 3.12 in the yield sample (`bench/yield_sample.py`):
titlecase keeps its unittest cases in `titlecase/tests.py`, its CI runs `python setup.py
install` then `python -m unittest`; the harvest handed pytest `setup.py` (read from the CI step
as a script it runs) and not `tests.py`, so every function was "not called by the tests".
jsonpointer's root `tests.py` was collected, and its 102 test methods extracted as targets
beside the library's 17. The control reads the tree as before (no package test modules, a
script named `setup.py` taken, `tests.py` a library module).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.harvest import declared
from replicate.languages import python_layout
from tests.integration.gen.drop_classes import before_and_after

CORE = '''"""Words in titles."""

SMALL = frozenset({"a", "an", "and", "of", "the", "to"})


def title(text):
    """Each word capitalised but the small ones after the first."""
    words = text.split()
    return " ".join(
        w.lower() if n and w.lower() in SMALL else w[:1].upper() + w[1:].lower()
        for n, w in enumerate(words)
    )


def initials(text):
    """The first letter of each word that is not small, upper-cased."""
    return "".join(w[0].upper() for w in text.split() if w.lower() not in SMALL)
'''

TESTS = """import unittest

from words.core import initials, title


class TitleTest(unittest.TestCase):
    def test_title(self):
        self.assertEqual(title("the lord of the rings"), "The Lord of the Rings")
        self.assertEqual(title("a tale OF two cities"), "A Tale of Two Cities")
        self.assertEqual(title("war and peace"), "War and Peace")

    def test_initials(self):
        self.assertEqual(initials("the lord of the rings"), "LR")
        self.assertEqual(initials("portable network graphics"), "PNG")
        self.assertEqual(initials("a b c"), "BC")


if __name__ == "__main__":
    unittest.main()
"""

FILES = {
    "setup.py": "from setuptools import setup\n\nsetup(name='words', packages=['words'])\n",
    "pyproject.toml": '[project]\nname = "words"\nversion = "0.1.0"\n',
    ".github/workflows/ci.yml": (
        "jobs:\n  test:\n    steps:\n      - run: python setup.py install\n"
        "      - run: |\n          python -m unittest\n"
    ),
    "words/__init__.py": "",
    "words/core.py": CORE,
    "words/tests.py": TESTS,
}
TITLE, INITIALS = "words.core.title", "words.core.initials"


def as_before(patch: pytest.MonkeyPatch) -> None:
    def old_is_test_file(name: str) -> bool:
        return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"

    patch.setattr(python_layout, "is_test_file", old_is_test_file)
    patch.setattr(declared, "_package_test_modules", lambda *_: iter(()))
    patch.setattr(declared, "NOT_TESTS", ())


def test_a_packages_test_module_is_run_and_not_minted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, after = before_and_after(
        tmp_path, FILES, {}, monkeypatch, (TITLE, INITIALS), control=as_before
    )
    assert set(before.reasons((TITLE, INITIALS)).values()) == {"not called by the tests"}
    assert any(s.startswith("words.tests.") for s in before.entries)  # its tests as targets
    assert not any(s.startswith("words.tests") for s in after.entries)
