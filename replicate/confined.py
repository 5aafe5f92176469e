"""Files read and written under a root, never outside it.

A batch is untrusted input (labs trade them), and so is every workspace an agent has written in.
Every path that comes from either is relative to some root (a repository snapshot, a workspace,
a run directory), and every file the harness writes or reads by such a path goes through here.

`relative_parts` refuses what is not a plain relative path (`replicate.core.paths`); the walk
then opens each directory with `O_NOFOLLOW` relative to the one before it
(openat-style), so no symlink on the way — planted in a batch's snapshot or in a workspace — can
lead out of the root, and no check can be raced by a later rename.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from replicate.core import path_problem
from replicate.errors import ReplicateError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class ConfinementError(ReplicateError):
    """A path that is not plain and relative, or that leads through a symlink."""

    def __init__(self, message: str, *, symlink: bool = False) -> None:
        super().__init__(message)
        self.symlink = symlink


def relative_parts(relpath: str) -> tuple[str, ...]:
    """The parts of a plain relative path; ConfinementError for anything else."""
    problem = path_problem(relpath)
    if problem:
        raise ConfinementError(f"path {relpath!r} {problem}")
    return tuple(relpath.split("/"))


@contextmanager
def parent_dir(root: Path, relpath: str, *, create: bool = False) -> Iterator[tuple[int, str]]:
    """An fd of the directory that holds `relpath` under `root`, and the leaf's name.

    Each directory on the way is opened without following symlinks; with `create`, missing ones
    are made.  The fd is closed when the block ends."""
    parts = relative_parts(relpath)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            child = _open_dir(fd, part, relpath, create)
            os.close(fd)
            fd = child
        yield fd, parts[-1]
    finally:
        os.close(fd)


def _open_dir(fd: int, part: str, relpath: str, create: bool) -> int:
    """Open the directory `part` below `fd`, refusing a symlink."""
    try:
        if create:
            with suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=fd)
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and is_symlink(part, fd):
            raise ConfinementError(
                f"{relpath} is reached through a symlink", symlink=True
            ) from None
        raise


def is_symlink(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def open_file(root: Path, relpath: str) -> int:
    """A read-only fd of the regular file `relpath` under `root` (no symlink anywhere)."""
    with parent_dir(root, relpath) as (fd, leaf):
        try:
            found = os.open(leaf, _FILE_FLAGS, dir_fd=fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP and is_symlink(leaf, fd):
                raise ConfinementError(f"{relpath} is a symlink", symlink=True) from None
            raise
    if not stat.S_ISREG(os.fstat(found).st_mode):
        os.close(found)
        raise ConfinementError(f"{relpath} is not a regular file")
    return found


def read_bytes(root: Path, relpath: str, limit: int | None = None) -> bytes:
    """The bytes of `relpath` under `root`; at most `limit` + 1 of them when a limit is given
    (so the caller can tell a file over the limit)."""
    with os.fdopen(open_file(root, relpath), "rb") as handle:
        return handle.read() if limit is None else handle.read(limit + 1)


def write_bytes(root: Path, relpath: str, data: bytes) -> None:
    """Write `relpath` under `root`, making its directories; whatever was at the leaf (a file or
    a symlink, never followed) is replaced by a new regular file."""
    with parent_dir(root, relpath, create=True) as (fd, leaf):
        with suppress(FileNotFoundError):
            os.unlink(leaf, dir_fd=fd)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        out = os.open(leaf, flags, 0o644, dir_fd=fd)
    with os.fdopen(out, "wb") as handle:
        handle.write(data)


def append_bytes(root: Path, relpath: str, data: bytes) -> None:
    """Append `data` to the regular file `relpath` under `root` in one write (made if missing;
    a symlink at the leaf is refused, never followed)."""
    with parent_dir(root, relpath, create=True) as (fd, leaf):
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            out = os.open(leaf, flags, 0o644, dir_fd=fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP and is_symlink(leaf, fd):
                raise ConfinementError(f"{relpath} is a symlink", symlink=True) from None
            raise
    try:
        if not stat.S_ISREG(os.fstat(out).st_mode):
            raise ConfinementError(f"{relpath} is not a regular file")
        view = memoryview(data)
        while view:
            view = view[os.write(out, view) :]
    finally:
        os.close(out)


def regular_files(root: Path) -> list[str]:
    """The relative paths of the regular files under `root`, sorted; no symlink is followed (a
    symlinked directory is not entered, a symlinked file not listed)."""
    found = []
    for folder, dirs, files in os.walk(root):
        base = Path(folder)
        dirs[:] = sorted(d for d in dirs if not (base / d).is_symlink())
        for name in files:
            path = base / name
            if not path.is_symlink() and path.is_file():
                found.append(path.relative_to(root).as_posix())
    return sorted(found)


def symlinks(root: Path) -> list[str]:
    """The relative paths of every symlink under `root` (to a file, a folder or nowhere), sorted;
    none is followed. `root` itself is walked only when it is a folder and not a link."""
    if root.is_symlink() or not root.is_dir():
        return []
    found = []
    for folder, dirs, files in os.walk(root):
        base = Path(folder)
        for name in (*dirs, *files):  # os.walk lists a linked folder in dirs, never enters it
            if (base / name).is_symlink():
                found.append((base / name).relative_to(root).as_posix())
    return sorted(found)
