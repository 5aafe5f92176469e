"""Grading a module task (task kind `module`): every function and method body of one file is the
candidate's.

It is graded as a class task is (`grading/classes.py`: a run per member that has inputs, the raw
reward the mean over members, each weighted by stratum within itself), its members the file's
functions and methods.  With `--repo-tests`, the repository's own tests reported beside the
reward (never in it) are the test files that import the module, whole, and the tests that
called a member while inputs were harvested (`module_test_ids`).
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from replicate import confined
from replicate.core import PARSE_LOCK, Target

MAX_TEST_FILE_BYTES = 1_000_000


def module_test_ids(
    tree: Path, target: Target, node_ids: Sequence[str], limit: int
) -> tuple[str, ...]:
    """The test files of `tree` that import the module of `target`, then those of `node_ids`
    (the tests that called a member) in no such file; at most `limit`."""
    files = importing_tests(tree, target.module, target.path)
    rest = [ident for ident in node_ids if ident.split("::", 1)[0] not in files]
    return (*files, *rest)[:limit]


@lru_cache(maxsize=64)
def importing_tests(tree: Path, module: str, path: str) -> tuple[str, ...]:
    """The repository's test files (`test_*.py`, `*_test.py`, or any file under a `test` or
    `tests` folder) that import `module` (`import m`, `from m import x`, `from parent import
    last`, or a submodule of it), in path order; `path` (the module's own file) left out."""
    found = []
    for name in confined.regular_files(tree):
        if name == path or not _is_test_file(name):
            continue
        try:
            data = confined.read_bytes(tree, name, MAX_TEST_FILE_BYTES + 1)
        except OSError:
            continue
        if len(data) <= MAX_TEST_FILE_BYTES and imports_module(data, module):
            found.append(name)
    return tuple(sorted(found))


def _is_test_file(name: str) -> bool:
    parts = name.split("/")
    file = parts[-1]
    if not file.endswith(".py"):
        return False
    named = file.startswith("test_") or file.endswith("_test.py")
    return named or any(part in ("test", "tests") for part in parts[:-1])


def imports_module(source: bytes, module: str) -> bool:
    """Whether the Python file `source` imports `module` (or a submodule of it) absolutely."""
    try:
        with PARSE_LOCK, warnings.catch_warnings():  # graders run on worker threads
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    parent, _, last = module.rpartition(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(_within(alias.name, module) for alias in node.names):
                return True
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if _within(node.module, module):
                return True
            if parent and node.module == parent and any(a.name == last for a in node.names):
                return True
    return False


def _within(name: str, module: str) -> bool:
    return name == module or name.startswith(module + ".")
