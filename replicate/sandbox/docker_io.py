"""The docker sandbox's plumbing on the host: FIFOs for the outputs, and lent ownership.

A container's standard streams go through the engine (and its log files), so the sandbox uses its
own: a fresh host folder, bind-mounted read-only at `IO_DIR`, holds the request's stdin as a file
and one FIFO per output (stdout, stderr, the results channel, and a status FIFO the wrapper writes
once the command is about to start).  Writing to a FIFO on a read-only mount is allowed; creating
files there is not.  We hold each FIFO's read end (and, until the container is gone, a write end,
so a FIFO nobody has opened yet does not read as closed), keep at most the cap of each and read and
drop the rest: a flood neither blocks the writer nor reaches the disk.

Writable mounts are lent to the unprivileged sandbox user for the run (`lend`): every entry is
chowned to it, and afterwards back to its recorded owner (new entries: the mount root's owner).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from replicate.errors import InfraError
from replicate.sandbox.arrivals import Arrival, ArrivalLog
from replicate.sandbox.base import WAIT_SLICE_S
from replicate.scratch import make_dir, remove_dir

IO_DIR = "/.sandbox-io"
STREAMS = ("stdout", "stderr", "channel", "status")
CHUNK = 1 << 16
GRACE_S = 2.0
STATUS_CAP = 64
KILL_WAIT_S = 30.0

Owner = tuple[int, int]


@dataclass(frozen=True)
class Captured:
    stdout: bytes
    stderr: bytes
    channel: bytes
    status: bytes
    timed_out: bool
    channel_arrivals: tuple[Arrival, ...] = ()


class IoDir:
    """Host side of one run's I/O: `io` (mounted at IO_DIR) and `empty` (covers package folders).

    `owner` is the sandbox user when it differs from ours: the FIFOs are handed to it.
    """

    def __init__(self, stdin: bytes, owner: Owner | None) -> None:
        self.root = make_dir("replicate-docker-")
        self.io = self.root / "io"
        self.empty = self.root / "empty"
        self.fds: dict[str, int] = {}
        self.holds: list[int] = []
        try:
            self._make(stdin, owner)
        except OSError as exc:
            self.close()
            raise InfraError(f"cannot prepare the docker sandbox's I/O folder: {exc}") from exc

    def _make(self, stdin: bytes, owner: Owner | None) -> None:
        for folder in (self.io, self.empty):
            folder.mkdir()
            folder.chmod(0o755)
        (self.io / "stdin").write_bytes(stdin)
        (self.io / "stdin").chmod(0o644)
        for name in STREAMS:
            fifo = self.io / name
            os.mkfifo(fifo, 0o600)
            if owner is not None:
                os.chown(fifo, *owner)
            self.fds[name] = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            self.holds.append(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC))

    def release(self) -> None:
        """The container is gone: without our write ends the FIFOs now read to their end."""
        for fd in self.holds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.holds = []

    def close(self) -> None:
        self.release()
        for fd in self.fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = {}
        remove_dir(self.root)

    def collect(
        self, cap: int, ended_fd: int, deadline: float, kill: Callable[[], None]
    ) -> Captured:
        """Drain the FIFOs until `ended_fd` turns readable (the container exited), killing the
        container at `deadline`; then drain what is left, for `GRACE_S` at most."""
        arrivals = ArrivalLog()
        sinks = {name: _Sink(STATUS_CAP if name == "status" else cap) for name in STREAMS}
        sinks["channel"].arrivals = arrivals
        timed_out = False
        with selectors.DefaultSelector() as sel:
            for name, fd in self.fds.items():
                sel.register(fd, selectors.EVENT_READ, sinks[name])
            sel.register(ended_fd, selectors.EVENT_READ, None)
            stop_at: float | None = None
            while sel.get_map():
                now = time.monotonic()
                if stop_at is None and not timed_out and now >= deadline:
                    timed_out = True
                    kill()
                    deadline = now + KILL_WAIT_S
                elif stop_at is None and timed_out and now >= deadline:
                    raise InfraError("the docker sandbox's container survived a kill")
                if stop_at is not None and now >= stop_at:
                    break
                wait = min((stop_at or deadline) - now, WAIT_SLICE_S)
                for key, _ in sel.select(max(wait, 0.0)):
                    if key.data is None:
                        sel.unregister(ended_fd)
                        self.release()
                        stop_at = time.monotonic() + GRACE_S
                    else:
                        _read_into(sel, key.fd, key.data)
        out = {name: bytes(sink.data) for name, sink in sinks.items()}
        return Captured(
            out["stdout"],
            out["stderr"],
            out["channel"],
            out["status"],
            timed_out=timed_out,
            channel_arrivals=arrivals.freeze(),
        )


class _Sink:
    """Keeps the first `cap` bytes and drops the rest (noting arrivals when asked)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.data = bytearray()
        self.arrivals: ArrivalLog | None = None

    def feed(self, chunk: bytes) -> None:
        room = self.cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]
            if self.arrivals is not None:
                self.arrivals.note(min(room, len(chunk)))


def _read_into(sel: selectors.BaseSelector, fd: int, sink: _Sink) -> None:
    try:
        chunk = os.read(fd, CHUNK)
    except BlockingIOError:
        return
    if chunk:
        sink.feed(chunk)
    else:
        sel.unregister(fd)  # every writer, ours included, has closed


@contextlib.contextmanager
def lend(paths: Sequence[str], owner: Owner | None) -> Iterator[None]:
    """Chown every entry under `paths` to `owner` for the block, then back (see module doc)."""
    if owner is None or not paths:
        yield
        return
    recorded: dict[str, Owner] = {}
    try:
        for root in paths:
            for path in _entries(root):
                info = os.lstat(path)
                recorded[path] = (info.st_uid, info.st_gid)
                os.lchown(path, *owner)
        yield
    finally:
        _give_back(paths, recorded)


def _give_back(paths: Sequence[str], recorded: dict[str, Owner]) -> None:
    for root in paths:
        fallback = recorded.get(root)
        if fallback is None:
            continue  # never lent (the walk failed before it)
        for path in _entries(root):
            with contextlib.suppress(OSError):
                os.lchown(path, *recorded.get(path, fallback))


def _entries(root: str) -> Iterator[str]:
    """`root` and, for a folder, everything below it; symbolic links are not followed."""
    yield root
    if os.path.islink(root) or not os.path.isdir(root):
        return
    for here, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            yield os.path.join(here, name)
