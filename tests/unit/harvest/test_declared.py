"""Where a repository declares its tests (`replicate.harvest.declared`), read without running."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from replicate.harvest import collect as harvest
from replicate.harvest.declared import declared_tests
from tests.integration.minted import write_files


def _declared(tree: Path, roots: tuple[str, ...] = (".",)) -> dict[str, str]:
    return {d.path: d.source for d in declared_tests(tree, roots)}


def test_root_level_test_modules(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "test.py": "",
            "tests.py": "",
            "test_parser.py": "",
            "parser_test.py": "",
            "testutils.py": "",  # a helper, not pytest's name for a test module
            "pkg/__init__.py": "",
        },
    )
    assert _declared(tmp_path) == {
        "parser_test.py": "a root-level test module",
        "test.py": "a root-level test module",
        "test_parser.py": "a root-level test module",
        "tests.py": "a root-level test module",
    }


@pytest.mark.parametrize(
    ("name", "text", "source"),
    [
        (
            "pyproject.toml",
            '[tool.pytest.ini_options]\ntestpaths = ["t", "missing"]\n',
            "pyproject.toml",
        ),
        ("pytest.ini", "[pytest]\ntestpaths = t missing\n", "pytest.ini"),
        ("tox.ini", "[pytest]\ntestpaths =\n    t\n", "tox.ini"),
        ("setup.cfg", "[tool:pytest]\ntestpaths = t\n", "setup.cfg"),
    ],
)
def test_configured_testpaths(tmp_path: Path, name: str, text: str, source: str) -> None:
    write_files(tmp_path, {name: text, "t/check_a.py": ""})
    assert _declared(tmp_path) == {"t": f"{source} testpaths"}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("tox.ini", "[testenv]\ncommands =\n    py.test {posargs} t/unit --tb=short\n"),
        ("tox.ini", "[testenv:py]\ncommands = {envpython} -m pytest -k fast t/unit\n"),
        ("tox.ini", "[testenv]\ncommands = coverage run -m pytest t/unit\n"),
        ("noxfile.py", 'def tests(session):\n    session.run("pytest", "t/unit")\n'),
        ("Makefile", "build:\n\tpython -m build\ntest:\n\t@python -m pytest t/unit\n"),
        (".github/workflows/ci.yml", "jobs:\n  t:\n    steps:\n      - run: pytest t/unit\n"),
        (
            ".github/workflows/ci.yml",
            "steps:\n  - run: |\n      pip install .\n      pytest t/unit\n",
        ),
        ("tox.ini", "[testenv]\ncommands = python -m unittest discover -s t/unit -p '*_t.py'\n"),
    ],
)
def test_runner_commands(tmp_path: Path, name: str, text: str) -> None:
    write_files(tmp_path, {name: text, "t/unit/check_a.py": "", "build": ""})
    assert list(_declared(tmp_path)) == ["t/unit"]


def test_a_script_the_repository_runs_and_unittest_modules_by_name(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "tox.ini": "[testenv]\ncommands =\n    python run_checks.py\n",
            "Makefile": "test:\n\tpython -m unittest suite.test_a\n",
            "run_checks.py": "",
            "suite/test_a.py": "",
        },
    )
    assert _declared(tmp_path) == {
        "run_checks.py": "tox.ini commands",
        "suite/test_a.py": "Makefile test target",
    }


def test_setup_cfg_test_suite(tmp_path: Path) -> None:
    write_files(
        tmp_path, {"setup.cfg": "[options]\ntest_suite = pkg.tests\n", "pkg/tests/a.py": ""}
    )
    assert _declared(tmp_path) == {"pkg/tests": "setup.cfg test_suite"}


def test_nothing_outside_the_tree_is_named(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    write_files(tmp_path, {"outside/test_x.py": ""})
    write_files(
        tree,
        {
            "tox.ini": "[testenv]\ncommands = pytest /etc ../outside t/../../outside linked\n",
            "pytest.ini": "[pytest]\ntestpaths = /tmp ..\n",
        },
    )
    os.symlink(tmp_path / "outside", tree / "linked")
    os.symlink(tmp_path / "outside" / "test_x.py", tree / "test_linked.py")
    assert _declared(tree) == {}


def test_unreadable_declarations_are_ignored(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "pyproject.toml": "[tool.pytest.ini_options\n",
            "tox.ini": "[testenv\ncommands = pytest t\n",
            "Makefile": "test:\n\tpytest 'unterminated\n",
            "t/a.py": "",
        },
    )
    assert _declared(tmp_path) == {}


def test_the_harvest_hands_them_to_pytest_after_the_usual_paths(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "tests/test_a.py": "",
            "test.py": "",
            "tox.ini": "[testenv]\ncommands = pytest tests spec\n",
            "spec/a_spec.py": "",
        },
    )
    assert harvest.test_paths(tmp_path, (".",)) == ["tests", "pkg", "spec", "test.py"]
    (note,) = harvest.collected_paths(tmp_path, (".",)).note()
    assert "spec (tox.ini commands)" in note and "test.py (a root-level test module)" in note
    assert "tests (" not in note  # a usual folder is not news


def test_a_packages_test_modules_unittest_discovers(tmp_path: Path) -> None:
    """`pkg/tests.py` (titlecase's), run by `python -m unittest` in its CI: pytest's names miss
    it; a CI step `python setup.py install` names no test module."""
    write_files(
        tmp_path,
        {
            ".github/workflows/ci.yml": "steps:\n  - run: python setup.py install\n",
            "setup.py": "",
            "pkg/__init__.py": "",
            "pkg/core.py": "",
            "pkg/tests.py": "",
            "pkg/testing.py": "",  # a library module unittest's pattern matches: not taken
            "pkg/sub/__init__.py": "",
            "pkg/sub/test.py": "",
            "notpkg/tests.py": "",  # no `__init__.py`: not a package unittest walks
        },
    )
    assert _declared(tmp_path) == {
        "pkg/sub/test.py": "a package's test module",
        "pkg/tests.py": "a package's test module",
    }
    # pytest folds them into the package it walks for doctests: its patterns must take them
    default = ("test_*.py", "*_test.py", "test.py", "tests.py")
    assert harvest.collected_paths(tmp_path, (".",)).python_files == default
    write_files(tmp_path, {"setup.cfg": "[tool:pytest]\npython_files = check_*.py\n"})
    own = ("check_*.py", "test.py", "tests.py")
    assert harvest.collected_paths(tmp_path, (".",)).python_files == own
    (tmp_path / "pkg" / "tests.py").unlink()
    (tmp_path / "pkg" / "sub" / "test.py").unlink()
    assert harvest.collected_paths(tmp_path, (".",)).python_files == ()  # pytest's own
