"""Leak audit before publishing: is a reference body visible to the agent anywhere else?

The agent sees the standard library, the repository's environment and the repository itself
(with only the target stubbed). A task whose reference body appears in any of them — a vendored
copy, a stdlib module that copied it, a duplicate elsewhere in the repository — is rejected.

Parsing a file for its functions' fingerprints is most of the audit's cost (small bodies spell
only common identifiers, so most of the standard library is parsed), and outside the repository
these are the same files every gen: `Kept` keeps their fingerprints in the cache between gens,
by path, size and modification time (keyed by the interpreter and the fingerprinting code, so a
change to either starts afresh), and so the identifiers each file spells, read to know which
files to parse (~1 s of every gen's own time for ~2,500 files). The repository's own files are
read each time. A file's identifiers are kept as a bit mask (`words_mask`: a bit per identifier's
CRC, a Bloom filter of one hash): a needle is looked for where every bit of its own mask is set,
and a file that sets them by chance is only parsed for nothing (the fingerprints decide). Kept as
sets of strings, loading them took ~0.45 s of every gen for ~8,900 files.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from replicate.batch import LoadedTask, read_source
from replicate.cache import publish
from replicate.core import Target
from replicate.gen import leaks as leaks_module
from replicate.gen import script_leaks
from replicate.gen.leaks import WORD, Needle, fingerprints, hits, needle_for
from replicate.jail import system_view

MAX_FILE_BYTES = 5_000_000
REPOSITORY = "the repository"  # parsed afresh each gen: its files are new to each
FilePrints = dict[str, tuple[int, ...]]
T = TypeVar("T")


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


@dataclass(frozen=True)
class _Seen:
    """One visible file, and the mask of the identifiers its text spells (`words_mask`)."""

    what: str
    path: Path
    words: int


@dataclass
class Kept(Generic[T]):
    """What `compute` makes of each file's text outside the repository (its functions'
    fingerprints, its identifiers), kept between gens in `path` by file path, size and
    modification time; a file changed since is read again."""

    path: Path | None
    compute: Callable[[str], T]
    known: dict[str, tuple[int, int, T | None]] = field(default_factory=dict)
    changed: bool = False

    @classmethod
    def load(cls, cache: Path | None, name: str, compute: Callable[[str], T]) -> Kept[T]:
        """The kept values of `name`, keyed by the interpreter and the code that computes them
        (a change to either starts afresh)."""
        if cache is None:
            return cls(None, compute)
        code = Path(leaks_module.__file__).read_bytes() + Path(__file__).read_bytes()
        key = hashlib.sha256(sys.version.encode() + b"\0" + code).hexdigest()[:20]
        path = cache / "audit" / f"{name}-{key}.marshal"
        try:
            known = marshal.loads(path.read_bytes())
        except (OSError, ValueError, EOFError, TypeError):
            known = {}
        return cls(path, compute, known if isinstance(known, dict) else {})

    def of(self, path: Path) -> T | None:
        """The value for `path`'s text; None when it cannot be read."""
        try:
            st = path.stat()
        except OSError:
            return None
        entry = self.known.get(str(path))
        if entry is not None and entry[:2] == (st.st_size, st.st_mtime_ns):
            return entry[2]
        text = _text(path)
        found = None if text is None else self.compute(text)
        self.known[str(path)] = (st.st_size, st.st_mtime_ns, found)
        self.changed = True
        return found

    def save(self) -> None:
        """Write the values back (best effort: a cache that cannot be written is skipped; two
        gens at once: the last one's file stands, both whole)."""
        if self.path is None or not self.changed:
            return
        with contextlib.suppress(OSError):
            publish(marshal.dumps(self.known), self.path)
            self.changed = False


WORD_BITS = 8192  # a file of ~250 identifiers sets ~3% of them


def mask_of(words: Iterable[str]) -> int:
    """A bit per word, at its CRC-32 (stable across processes, unlike `hash`)."""
    bits = bytearray(WORD_BITS // 8)
    for word in words:
        at = zlib.crc32(word.encode()) % WORD_BITS
        bits[at >> 3] |= 1 << (at & 7)
    return int.from_bytes(bits, "little")


def words_mask(text: str) -> int:
    """The mask of the identifiers a file's text spells (a needle needs all of its own)."""
    return mask_of(set(WORD.findall(text)))


class LeakAudit:
    """The visible roots, read once on first use (each file's identifiers kept, not its text),
    then any number of tasks checked against them: gen audits each task as it is minted. A file
    that holds every identifier of some reference is parsed once, its functions' fingerprints
    kept for the tasks after (and, outside the repository, with a `cache`, for later gens:
    `close` writes them)."""

    def __init__(self, roots: Sequence[tuple[str, Path]], cache: Path | None = None) -> None:
        self._roots = tuple(roots)
        self._files: list[_Seen] | None = None
        self._prints: dict[Path, FilePrints] = {}
        self._kept_prints = Kept.load(cache, "prints", fingerprints)
        self._kept_words = Kept.load(cache, "words", words_mask)

    def _index(self) -> list[_Seen]:
        if self._files is None:
            hidden = frozenset(system_view().hidden_dirs)
            self._files = []
            for what, root in self._roots:
                for path in _python_files(root, hidden):
                    words = self._words(what, path)
                    if words is not None:
                        self._files.append(_Seen(what, path, words))
        return self._files

    def _words(self, what: str, path: Path) -> int | None:
        if what != REPOSITORY:
            return self._kept_words.of(path)
        text = _text(path)
        return None if text is None else words_mask(text)

    def leaks(self, tasks: Sequence[LoadedTask]) -> dict[str, Leak]:
        """Task id -> where its reference body was found (first place), for the leaked tasks.
        A class task hides several bodies: it leaks where any of its members' does."""
        needles: dict[str, Needle] = {}
        own: dict[str, tuple[Path, int]] = {}
        task_of: dict[str, str] = {}
        found: dict[str, Leak] = {}
        for task in tasks:
            if task.spec.language != "python":  # its bodies do not survive a build: by place
                leak = _script_leak(task)
                if leak is not None:
                    found[task.id] = leak
                continue
            path = task.repo.tree / task.hidden.target.path
            source = path.read_bytes()
            for key, target in _hidden_bodies(task):
                made = needle_for(source, target)
                if made is not None:
                    needles[key], line = made
                    own[key] = (path.resolve(), line)
                    task_of[key] = task.id
        masks = {k: mask_of(n.words) for k, n in needles.items()}
        for seen in self._index() if needles else ():
            remaining = {k: n for k, n in needles.items() if task_of[k] not in found}
            if not remaining:
                break
            possible = {k: n for k, n in remaining.items() if masks[k] & seen.words == masks[k]}
            prints = self._fingerprints(seen) if possible else {}
            if not prints:
                continue
            resolved = seen.path.resolve()
            skip = {k: line for k, (p, line) in own.items() if p == resolved}
            for key in hits(prints, possible, skip):
                found.setdefault(task_of[key], Leak(seen.what, seen.path))
        return found

    def _fingerprints(self, seen: _Seen) -> FilePrints:
        path = seen.path
        if path not in self._prints:
            if seen.what != REPOSITORY:
                self._prints[path] = self._kept_prints.of(path) or {}
            else:
                text = _text(path)
                self._prints[path] = {} if text is None else fingerprints(text)
        return self._prints[path]

    def close(self) -> None:
        self._kept_prints.save()
        self._kept_words.save()


def _hidden_bodies(task: LoadedTask) -> list[tuple[str, Target]]:
    """The bodies a task hides, each with a key of its own: a class task's members', else the
    target's."""
    target = task.hidden.target
    if target.kind != "class":
        return [(task.id, target)]
    return [(f"{task.id} {member.qualname}", member) for member in target.members]


def _script_leak(task: LoadedTask) -> Leak | None:
    """A built copy of a script task's file that spells one of its hidden bodies' names, or a
    verbatim copy of one of them elsewhere in the tree (`script_leaks`)."""
    tree, path = task.repo.tree, task.hidden.target.path
    source = task.original_source()
    for _, target in _hidden_bodies(task):
        built = script_leaks.built_copy(tree, path, target.name)
        if built is not None:
            return Leak(script_leaks.BUILT, built)
        body = source[target.body_span.start_byte : target.body_span.end_byte]
        copied = script_leaks.copied_body(tree, path, body)
        if copied is not None:
            return Leak(script_leaks.COPIED, copied)
    return None


def _text(path: Path) -> str | None:
    return read_source(path, MAX_FILE_BYTES)


def audit_leaks(tasks: Sequence[LoadedTask], roots: Sequence[tuple[str, Path]]) -> dict[str, Leak]:
    """Task id -> where its reference body was found (first place), for the leaked tasks."""
    return LeakAudit(roots).leaks(tasks)
