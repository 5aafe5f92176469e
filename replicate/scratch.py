"""Scratch folders and mounts that do not outlive the process that made them.

Every scratch folder is named `<prefix><pid>.<start>-<random>`: the owner's pid and its start time
(field 22 of /proc/<pid>/stat, in clock ticks since boot), so a later process can tell whether the
owner still lives even after its pid was reused.  The workspace quota's tmpfs mounts carry the same
owner in their source name (`replicate-ws-<pid>.<start>`).

While the owner runs, each folder or mount is in a registry: `install_signal_cleanup` (called once
by the CLI's main thread) removes all of them on SIGINT or SIGTERM, then lets the signal do what it
did before (SIGINT: KeyboardInterrupt; SIGTERM: death).  SIGKILL cannot be caught: `sweep`, at the
next start, removes the folders and detaches the mounts whose owner is gone.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

MOUNT_SOURCE_PREFIX = "replicate-ws-"
_INSTALLED: list[bool] = []  # set once the signal handlers are in place
_STOPPING: list[int] = []  # the signal that is ending this process, once its handler ran
MNT_DETACH = 2
_OWNED = re.compile(r"^replicate-[a-z]+-(\d+)\.(\d+)-")
_OWNED_MOUNT = re.compile(rf"^{MOUNT_SOURCE_PREFIX}(\d+)\.(\d+)$")
_live: dict[str, Callable[[], None]] = {}
_lock = threading.RLock()  # re-entrant: the signal handler may interrupt a holder in main
_tokens: dict[int, str] = {}
_FORK_HOOKED: list[bool] = []  # the at-fork hook is in place (set on the first registration)


def start_time(pid: int) -> int | None:
    """The start time of process `pid` (clock ticks after boot), or None when it does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # after the command name, which may hold spaces
    return int(fields[19])  # field 22 of the whole line; the remainder starts at field 3


def owner_token() -> str:
    """`<pid>.<start>` of this process (recomputed after a fork: the pid differs)."""
    pid = os.getpid()
    if pid not in _tokens:
        _tokens[pid] = f"{pid}.{start_time(pid) or 0}"
    return _tokens[pid]


def owner_alive(pid: int, start: int) -> bool:
    return start_time(pid) == start


# --- the registry, emptied on SIGINT/SIGTERM ---------------------------------------------------


def register(key: str, cleanup: Callable[[], None]) -> None:
    with _lock:
        if not _FORK_HOOKED:
            _FORK_HOOKED.append(True)
            os.register_at_fork(after_in_child=_forget_in_child)
        _live[key] = cleanup


def _forget_in_child() -> None:
    """In a child forked from an owner of scratch (a trainer's data worker, a pool's process):
    the parent's folders and mounts are not the child's to remove, at its exit or on the
    SIGTERM that ends a pool's worker (it once took a grader's warm sessions from its parent)."""
    global _lock  # the parent's may have been held by another thread at the fork
    _lock = threading.RLock()
    _live.clear()


def unregister(key: str) -> None:
    with _lock:
        _live.pop(key, None)


def cleanup_all() -> None:
    """Run every registered cleanup (best effort: a failure does not stop the others)."""
    with _lock:
        pending = list(_live.items())
        _live.clear()
    for _key, cleanup in pending:
        with contextlib.suppress(Exception):
            cleanup()


def make_dir(prefix: str) -> Path:
    """A fresh scratch folder in the temporary directory, named for its owner and registered."""
    path = Path(tempfile.mkdtemp(prefix=f"{prefix}{owner_token()}-"))
    register(str(path), lambda: shutil.rmtree(path, ignore_errors=True))
    return path


def remove_dir(path: Path) -> None:
    unregister(str(path))
    shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def temporary_dir(prefix: str) -> Iterator[str]:
    """Like `tempfile.TemporaryDirectory(prefix=...)`, removed on SIGINT/SIGTERM too."""
    path = make_dir(prefix)
    try:
        yield str(path)
    finally:
        remove_dir(path)


def install_signal_cleanup() -> None:
    """From the main thread: on SIGINT/SIGTERM remove every live scratch, then act as before.
    Once per process: a second call (the CLI's `main` run in-process again) does nothing."""
    if _INSTALLED:
        return
    _INSTALLED.append(True)
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(signum)
        signal.signal(signum, _handler(previous))
    atexit.register(cleanup_all)


def stopping() -> bool:
    """Whether a SIGINT or SIGTERM is ending this process (its scratch is gone): work still in
    flight in other threads should stop rather than start anything new."""
    return bool(_STOPPING)


def _handler(previous: object) -> Callable[[int, FrameType | None], None]:
    def handle(signum: int, frame: FrameType | None) -> None:
        _STOPPING.append(signum)
        cleanup_all()
        if callable(previous):
            previous(signum, frame)
            return
        if previous == signal.SIG_IGN:
            return
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    return handle


# --- the sweep at the next start ---------------------------------------------------------------


def sweep(root: Path | None = None) -> list[Path]:
    """Remove scratch folders under `root` (the temporary directory) and detach workspace
    mounts whose owner is gone; return what was removed.  Unnamed folders are left alone."""
    gone = [*_sweep_dirs(Path(root or tempfile.gettempdir())), *_sweep_mounts()]
    return gone


def _sweep_dirs(root: Path) -> list[Path]:
    removed = []
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            owner = _OWNED.match(entry.name)
            if owner is None or owner_alive(int(owner[1]), int(owner[2])):
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry)
    return removed


def _sweep_mounts() -> list[Path]:
    removed = []
    for source, point in tmpfs_mounts():
        owner = _OWNED_MOUNT.match(source)
        dead = owner is not None and not owner_alive(int(owner[1]), int(owner[2]))
        if dead and unmount(point):
            removed.append(point)
    return removed


def tmpfs_mounts() -> list[tuple[str, Path]]:
    """(source, mount point) of this namespace's tmpfs mounts (/proc/self/mountinfo)."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            before, _, after = line.partition(" - ")
            fields, tail = before.split(), after.split()
            if len(fields) > 4 and len(tail) > 1 and tail[0] == "tmpfs":
                found.append((tail[1], Path(_unescape(fields[4]))))
    return found


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), field)


def unmount(point: Path) -> bool:
    """Unmount `point`, lazily (MNT_DETACH) when it is busy; False when neither worked."""
    libc = ctypes.CDLL(None, use_errno=True)
    target = os.fsencode(point)
    return libc.umount2(target, 0) == 0 or libc.umount2(target, MNT_DETACH) == 0
