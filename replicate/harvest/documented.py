"""The examples a repository's documentation shows, handed to pytest as doctests.

An sdist often ships its README and API notes but not its tests (orderedmultidict 1.0.2 ships
`README.md` and `API.md` with 155 `>>>` examples and no test file). Those examples are calls
the project itself wrote down, outputs beside them: the harvest runs them as doctests, under the
recording plugin and in the sandbox like any test, so their calls become traced inputs (visible
ones: the files stay in the agent's workspace, and the baseline's table of visible calls is
built from them as from any test's). Whether an example's printed output still matches does not
matter here (the hidden original decides every expected outcome); a Markdown fence after an
example's output makes doctest report a failure, so the harvest runs doctests on past failures.

Read, never run, here: root-level text files and those of a `docs` or `doc` folder that hold a
line starting `>>> `. Nothing that leaves the tree (no symlinked part) is taken.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

from replicate.harvest.declared import DeclaredPath

SOURCE = "documentation examples"
DOC_SUFFIXES = (".md", ".rst", ".txt")
DOC_FOLDERS = ("docs", "doc")
FOLDER_DEPTH = 3
MAX_FILES = 40
MAX_BYTES = 1_000_000  # a larger text file is not read
PROMPT = re.compile(r"^[ \t]*>>> ", re.M)
PYTEST_DOCTEST_GLOB = "test*.txt"  # pytest's own `--doctest-glob`, replaced by any given one
# pytest collects a `.txt` or `.rst` file named on its command line as doctests; a `.md` file
# only when a `--doctest-glob` matches its name.
NEEDS_GLOB = (".md",)


def documented_examples(tree: Path) -> tuple[DeclaredPath, ...]:
    """The repository's documentation files holding doctest examples, root-level first."""
    found: list[DeclaredPath] = []
    for path in documentation_files(tree):
        if len(found) >= MAX_FILES:
            break
        if _has_examples(path):
            found.append(DeclaredPath(path.relative_to(tree).as_posix(), SOURCE))
    return tuple(found)


def doctest_options(found: Sequence[DeclaredPath]) -> tuple[str, ...]:
    """pytest's options to run the documentation files among `found` as doctests, past a
    failing example: a glob for each Markdown file's name, pytest's own glob kept beside
    them; none when there is no such file (the harvest runs as before)."""
    documents = [d.path for d in found if from_documentation(d.path)]
    if not documents:
        return ()
    names = [PurePosixPath(p).name for p in documents if PurePosixPath(p).suffix in NEEDS_GLOB]
    globs = [PYTEST_DOCTEST_GLOB, *dict.fromkeys(names)] if names else []
    return ("--doctest-continue-on-failure", *(f"--doctest-glob={g}" for g in globs))


def from_documentation(origin: str) -> bool:
    """Whether a test node id names a documentation file (`API.md::API.md`), not a test pytest
    collects on its own: the repository-tests signal leaves it out."""
    name = PurePosixPath(origin.split("::", 1)[0]).name
    return name.endswith(DOC_SUFFIXES) and not fnmatch(name, PYTEST_DOCTEST_GLOB)


def documentation_files(tree: Path) -> Iterator[Path]:
    """Text files at the root, then in a `docs` or `doc` folder (`FOLDER_DEPTH` levels down),
    sorted; none hidden, none through a symlink."""
    yield from _files(tree, tree, 1)
    for name in DOC_FOLDERS:
        folder = tree / name
        if folder.is_dir() and not folder.is_symlink():
            yield from _files(tree, folder, FOLDER_DEPTH)


def _files(tree: Path, folder: Path, depth: int) -> Iterator[Path]:
    for child in sorted(folder.iterdir()):
        if child.is_symlink() or child.name.startswith("."):
            continue
        if child.is_file() and child.suffix in DOC_SUFFIXES:
            yield child
        elif child.is_dir() and depth > 1:
            yield from _files(tree, child, depth - 1)


def _has_examples(path: Path) -> bool:
    try:
        if path.stat().st_size > MAX_BYTES:
            return False
        return PROMPT.search(path.read_text(encoding="utf-8", errors="replace")) is not None
    except OSError:
        return False
