"""Leak audit before publishing: is a reference body visible to the agent anywhere else?

The agent sees the standard library, the repository's environment and the repository itself
(with only the target stubbed). A task whose reference body appears in any of them — a vendored
copy, a stdlib module that copied it, a duplicate elsewhere in the repository — is rejected.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from replicate.batch.store import LoadedTask
from replicate.batch.visible import read_source
from replicate.harness.sandbox.system import system_view
from replicate.verifiers.leaks import WORD, Needle, fingerprints, hits, needle_for

MAX_FILE_BYTES = 5_000_000


@dataclass(frozen=True)
class Leak:
    what: str  # "the standard library", "the environment", "the repository"
    path: Path


def _python_files(root: Path, hidden: frozenset[str]) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = [
            d
            for d in dirs
            if d not in ("__pycache__", ".git") and os.path.join(folder, d) not in hidden
        ]
        for name in files:
            path = Path(folder, name)
            if name.endswith(".py") and not path.is_symlink():
                yield path


def visible_roots(tree: Path, site_packages: Path) -> tuple[tuple[str, Path], ...]:
    """(what, where) of everything an agent sees besides its own mounts."""
    view = system_view()
    return (
        ("the standard library", Path(view.stdlib)),
        ("the environment", site_packages),
        ("the repository", tree),
        *(("the system", Path(p)) for p in view.read_only if p.startswith("/usr")),
    )


@dataclass(frozen=True)
class _Seen:
    """One visible file, and the identifiers its text spells (a needle needs all of its own)."""

    what: str
    path: Path
    words: frozenset[str]


class LeakAudit:
    """The visible roots, read once on first use (each file's identifiers kept, not its text),
    then any number of tasks checked against them: gen audits each task as it is minted. A file
    that holds every identifier of some reference is parsed once, its functions' fingerprints
    kept for the tasks after."""

    def __init__(self, roots: Sequence[tuple[str, Path]]) -> None:
        self._roots = tuple(roots)
        self._files: list[_Seen] | None = None
        self._prints: dict[Path, dict[str, tuple[int, ...]]] = {}

    def _index(self) -> list[_Seen]:
        if self._files is None:
            hidden = frozenset(system_view().hidden_dirs)
            self._files = []
            for what, root in self._roots:
                for path in _python_files(root, hidden):
                    text = _text(path)
                    if text is not None:
                        words = frozenset(sys.intern(w) for w in WORD.findall(text))
                        self._files.append(_Seen(what, path, words))
        return self._files

    def leaks(self, tasks: Sequence[LoadedTask]) -> dict[str, Leak]:
        """Task id -> where its reference body was found (first place), for the leaked tasks."""
        needles: dict[str, Needle] = {}
        own: dict[str, tuple[Path, int]] = {}
        for task in tasks:
            path = task.repo.tree / task.hidden.target.path
            made = needle_for(path.read_bytes(), task.hidden.target)
            if made is not None:
                needles[task.id], line = made
                own[task.id] = (path.resolve(), line)
        found: dict[str, Leak] = {}
        for seen in self._index() if needles else ():
            remaining = {k: n for k, n in needles.items() if k not in found}
            if not remaining:
                break
            possible = {k: n for k, n in remaining.items() if n.words <= seen.words}
            prints = self._fingerprints(seen.path) if possible else {}
            if not prints:
                continue
            resolved = seen.path.resolve()
            skip = {k: line for k, (p, line) in own.items() if p == resolved}
            for key in hits(prints, possible, skip):
                found[key] = Leak(seen.what, seen.path)
        return found

    def _fingerprints(self, path: Path) -> dict[str, tuple[int, ...]]:
        if path not in self._prints:
            text = _text(path)
            self._prints[path] = {} if text is None else fingerprints(text)
        return self._prints[path]


def _text(path: Path) -> str | None:
    return read_source(path, MAX_FILE_BYTES)


def audit_leaks(tasks: Sequence[LoadedTask], roots: Sequence[tuple[str, Path]]) -> dict[str, Leak]:
    """Task id -> where its reference body was found (first place), for the leaked tasks."""
    return LeakAudit(roots).leaks(tasks)
