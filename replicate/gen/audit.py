"""Leak audit before publishing: is a reference body visible to the agent anywhere else?

The agent sees the standard library, the repository's environment and the repository itself
(with only the target stubbed). A task whose reference body appears in any of them — a vendored
copy, a stdlib module that copied it, a duplicate elsewhere in the repository — is rejected.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from replicate.batch.store import LoadedTask
from replicate.harness.sandbox.system import system_view
from replicate.verifiers.leaks import Needle, hits_in_text, needle_for

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


def audit_leaks(tasks: Sequence[LoadedTask], roots: Sequence[tuple[str, Path]]) -> dict[str, Leak]:
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
    hidden = frozenset(system_view().hidden_dirs)
    for what, root in roots:
        for path in _python_files(root, hidden):
            remaining = {k: n for k, n in needles.items() if k not in found}
            if not remaining:
                return found
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    continue
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            resolved = path.resolve()
            skip = {k: line for k, (p, line) in own.items() if p == resolved}
            for key in hits_in_text(text, remaining, skip):
                found[key] = Leak(what, path)
    return found
