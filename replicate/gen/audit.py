"""Leak audit before publishing: is a reference body visible to the agent anywhere else?

The agent sees the standard library, the repository's environment and the repository itself
(with only the target stubbed). A task whose reference body appears in any of them — a vendored
copy, a stdlib module that copied it, a duplicate elsewhere in the repository — is rejected.

Parsing every such file costs seconds per gen (most of them spell out every identifier of some
body), and outside the repository they are the same files each time: their functions'
fingerprints are kept in the cache (`Prints`), by path, size and modification time, and a file
is read and searched as before only when one of its fingerprints is some body's.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from replicate.batch.store import LoadedTask
from replicate.harness.sandbox.system import system_view
from replicate.verifiers.leaks import (
    MIN_STATEMENTS,
    Needle,
    function_prints,
    hits_in_text,
    needle_for,
)

MAX_FILE_BYTES = 5_000_000
REPOSITORY = "the repository"  # searched afresh each time: its files are new to each gen
PRINTS_VERSION = "1"
FilePrints = tuple[tuple[str, int], ...]


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
        (REPOSITORY, tree),
        *(("the system", Path(p)) for p in view.read_only if p.startswith("/usr")),
    )


@dataclass
class Prints:
    """Fingerprints of the functions of files outside the repository, kept between gens in
    `path` (by file path, size and modification time)."""

    path: Path
    known: dict[str, tuple[int, int, FilePrints]] = field(default_factory=dict)
    changed: bool = False

    @classmethod
    def load(cls, cache: Path) -> Prints:
        key = f"{PRINTS_VERSION}\0{sys.version}\0{MIN_STATEMENTS}".encode()
        path = cache / "audit" / f"{hashlib.sha256(key).hexdigest()[:20]}.marshal"
        try:
            known = marshal.loads(path.read_bytes())
        except (OSError, ValueError, EOFError, TypeError):
            known = {}
        return cls(path, known if isinstance(known, dict) else {})

    def of(self, path: Path, st: os.stat_result) -> FilePrints | None:
        """The file's fingerprints (None when it cannot be read)."""
        entry = self.known.get(str(path))
        if entry is not None and entry[:2] == (st.st_size, st.st_mtime_ns):
            return entry[2]
        text = _read(path)
        if text is None:
            return None
        found = function_prints(text)
        self.known[str(path)] = (st.st_size, st.st_mtime_ns, found)
        self.changed = True
        return found

    def save(self) -> None:
        if not self.changed:
            return
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temp = tempfile.mkstemp(prefix=self.path.name, dir=self.path.parent)
            with os.fdopen(handle, "wb") as out:
                out.write(marshal.dumps(self.known))
            os.replace(temp, self.path)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def audit_leaks(
    tasks: Sequence[LoadedTask], roots: Sequence[tuple[str, Path]], cache: Path | None = None
) -> dict[str, Leak]:
    """Task id -> where its reference body was found (first place), for the leaked tasks; with
    a `cache`, the fingerprints of files outside the repository are kept there (`Prints`)."""
    needles: dict[str, Needle] = {}
    own: dict[str, tuple[Path, int]] = {}
    for task in tasks:
        path = task.repo.tree / task.hidden.target.path
        made = needle_for(path.read_bytes(), task.hidden.target)
        if made is not None:
            needles[task.id], line = made
            own[task.id] = (path.resolve(), line)
    prints = Prints.load(cache) if cache is not None else None
    try:
        return _search(needles, own, roots, prints)
    finally:
        if prints is not None:
            prints.save()


def _search(
    needles: Mapping[str, Needle],
    own: Mapping[str, tuple[Path, int]],
    roots: Sequence[tuple[str, Path]],
    prints: Prints | None,
) -> dict[str, Leak]:
    found: dict[str, Leak] = {}
    hidden = frozenset(system_view().hidden_dirs)
    for what, root in roots:
        for path in _python_files(root, hidden):
            remaining = {k: n for k, n in needles.items() if k not in found}
            if not remaining:
                return found
            try:
                st = path.stat()
            except OSError:
                continue
            if st.st_size > MAX_FILE_BYTES:
                continue
            if prints is not None and what != REPOSITORY:
                known = prints.of(path, st)
                wanted = {n.fingerprint for n in remaining.values()}
                if known is None or not any(print_ in wanted for print_, _ in known):
                    continue  # no body of theirs here: searching the text would find none
            text = _read(path)
            if text is None:
                continue
            resolved = path.resolve()
            skip = {k: line for k, (p, line) in own.items() if p == resolved}
            for key in hits_in_text(text, remaining, skip):
                found[key] = Leak(what, path)
    return found
