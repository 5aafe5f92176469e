"""What the tests import and nothing declares is added to the test requirements, from a table
of known names only (dpath 2.2.0's tests import nose2 and hypothesis, and its sdist declares
neither): read from the test files, never run."""

from __future__ import annotations

from pathlib import Path

from replicate.envs.deps import discover_requirements
from replicate.envs.test_imports import undeclared_test_imports

TEST = """import os
import yaml
from nose2.tools.such import helper
from hypothesis import given
import helpers
import mypkg.core
from . import sibling
"""


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_core.py").write_text(TEST)
    (tmp_path / "tests" / "helpers.py").write_text("import freezegun\n")  # a test helper too
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='mypkg')\n")
    return tmp_path


def test_known_undeclared_imports_are_added(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert undeclared_test_imports(root, ["hypothesis>=6"], ["mypkg"]) == [
        "freezegun",
        "nose2",
        "PyYAML",
    ]
    declared = ["hypothesis", "nose2==0.15", "pyyaml", "freezegun"]
    assert undeclared_test_imports(root, declared, ["mypkg"]) == []  # the control


def test_the_requirements_say_so(tmp_path: Path) -> None:
    found = discover_requirements(_tree(tmp_path), None)
    assert {"nose2", "hypothesis", "PyYAML", "freezegun"} <= set(found.test)
    assert any("nothing declares: freezegun, hypothesis, nose2, PyYAML" in n for n in found.notes)
