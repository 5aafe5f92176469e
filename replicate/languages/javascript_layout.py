"""Which files of a JavaScript/TypeScript tree are the library's own source, and its literals."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from replicate.languages.javascript_extract import JS_SUFFIXES, TS_SUFFIXES
from replicate.languages.literals import literals_of

# Folders that hold no library source: dependencies, build output, tests.
SKIPPED_DIRS = frozenset(
    {"node_modules", "dist", "build", "coverage", "test", "tests", "__tests__", "__mocks__"}
)
_TEST_MARKS = (".test.", ".spec.")
_DECLARATIONS = (".d.ts", ".d.mts", ".d.cts")
_LITERAL = re.compile(r"""(["'`])([^"'`\\\n$]{1,64})\1""")


def is_source_file(name: str) -> bool:
    """A JS/TS file that is neither minified, a test nor a type declaration (`.d.ts`)."""
    if not name.endswith(JS_SUFFIXES + TS_SUFFIXES):
        return False
    if name.endswith(_DECLARATIONS) or ".min." in name:
        return False
    return not any(mark in name for mark in _TEST_MARKS)


def iter_source_files(root: Path) -> Iterator[tuple[Path, str]]:
    """(path, repo-relative POSIX path) of every source file under `root`, sorted, symlinks and
    hidden or skipped folders left out."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(files):
            path = Path(folder) / name
            if is_source_file(name) and not path.is_symlink():
                yield path, path.relative_to(root).as_posix()


def library_literals(root: Path) -> frozenset[str]:
    """The short string literals (quoted or plain template strings) the library's own source
    spells, its tests left out."""
    return literals_of((path for path, _ in iter_source_files(root)), _LITERAL)
