"""Test-only packages a repository's tests import but no file of it declares.

An sdist often ships its tests without the configuration that installs what they import: dpath
2.2.0's tests import `nose2.tools.such` (5 of 14 files) and `hypothesis`, and declare neither
(no tox.ini, no test extra in the sdist); those files failed to import and 14 of its functions
were "not called by the tests". The test files are read (never run) for their top-level
imports; a name in `KNOWN`, a short table of packages made for testing and of the usual
distributions whose import name differs from their own, is added to the test requirements
unless a requirement already names that distribution. Nothing is guessed from a name that is
not in the table (the module a test imports may be a helper beside it, or a typo).
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from packaging.utils import canonicalize_name

from replicate.core import PARSE_LOCK

KNOWN = {  # import name -> distribution
    "nose2": "nose2",
    "nose": "nose",
    "mock": "mock",
    "hypothesis": "hypothesis",
    "pytest_mock": "pytest-mock",
    "freezegun": "freezegun",
    "responses": "responses",
    "parameterized": "parameterized",
    "testfixtures": "testfixtures",
    "ddt": "ddt",
    "faker": "Faker",
    "pytz": "pytz",
    "yaml": "PyYAML",
    "dateutil": "python-dateutil",
    "toml": "toml",
    "six": "six",
}
TEST_DIRS = frozenset({"tests", "test", "testing"})
TEST_NAME = re.compile(r"^(test_\w+|\w+_test|tests?|conftest)\.py$")
SKIPPED_DIRS = frozenset({"node_modules", "site-packages", "build", "dist", "__pycache__"})
MAX_FILES = 2000
MAX_BYTES = 1_000_000


def undeclared_test_imports(
    root: Path, declared: Sequence[str], own_names: Sequence[str]
) -> list[str]:
    """The distributions of `KNOWN` that the test files import and `declared` (requirement
    strings) and the repository itself (`own_names`, normalised) do not name."""
    named = {canonicalize_name(_requirement_name(r)) for r in declared} | set(own_names)
    found: dict[str, None] = {}
    for module in sorted(_imported(root)):
        dist = KNOWN.get(module)
        if dist is not None and canonicalize_name(dist) not in named:
            found[dist] = None
    return list(found)


def _imported(root: Path) -> set[str]:
    stdlib = frozenset(getattr(sys, "stdlib_module_names", ()))
    names: set[str] = set()
    for path in _test_files(root):
        names |= _top_level_imports(path)
    return {n for n in names if n not in stdlib and not _local(root, n)}


def _local(root: Path, name: str) -> bool:
    """A module of the repository's own by that name (a `mock.py` beside the tests, say)."""
    folders = [root, root / "src", *(root / d for d in TEST_DIRS)]
    return any((f / name).exists() or (f / f"{name}.py").exists() for f in folders)


def _test_files(root: Path) -> Iterator[Path]:
    seen = 0
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).parts
        if any(p.startswith(".") or p in SKIPPED_DIRS for p in rel) or path.is_symlink():
            continue
        if TEST_NAME.match(path.name) or set(rel[:-1]) & TEST_DIRS:
            seen += 1
            if seen > MAX_FILES:
                return
            yield path


def _top_level_imports(path: Path) -> set[str]:
    try:
        if path.stat().st_size > MAX_BYTES:
            return set()
        text = path.read_text(encoding="utf-8", errors="replace")
        with PARSE_LOCK:
            tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _requirement_name(requirement: str) -> str:
    match = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return match.group(1) if match else requirement
