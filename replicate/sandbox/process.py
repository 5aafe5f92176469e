"""Run one process tree under a wall clock, with capped outputs, and kill all of it afterwards.

Shared by every backend.  The child starts in its own session (so its process group can be
killed), with RLIMIT_AS / RLIMIT_FSIZE / RLIMIT_CORE set before exec, and, where the cgroup v1
`pids` and `memory` controllers are writable, inside a fresh cgroup per run: `pids.max` bounds
the tree (root ignores RLIMIT_NPROC), `memory.limit_in_bytes` bounds all of it including tmpfs
pages, and the cgroup's member list finds every process the tree left behind (a double-forked
daemon that left the process group included) so nothing outlives `run_process`.

stdout, stderr, the results channel (fd 3 in the child) and an optional side pipe are drained
concurrently by one selector loop; each keeps at most its cap and the rest is read and dropped, so
a flood can neither block the child nor fill our memory.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import selectors
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from replicate.errors import InfraError
from replicate.sandbox.arrivals import ArrivalLog
from replicate.sandbox.base import WAIT_SLICE_S, Limits, SandboxResult, StopWhen
from replicate.sandbox.cgroup import Cgroup
from replicate.sandbox.spawn import spawn

CHUNK = 1 << 16
GRACE_S = 2.0
BATCH_S = 0.0005  # after a lone event, let more output gather before waking again
SIDE_CAP = 1 << 16
CHANNEL_PIPE_BYTES = 1 << 20
STDIN_AHEAD_BYTES = 1 << 20
_HIGH_FD = 10
_MB = 1 << 20


@dataclass(frozen=True)
class ProcessSpec:
    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: str | None
    timeout_s: float
    limits: Limits = field(default_factory=Limits)
    stdin: bytes = b""
    channel: bool = False
    pids_overhead: int = 0  # processes the backend itself adds to the tree (bwrap: 2)
    track_tree: bool = True  # a cgroup even without limits, to find escaped descendants
    # keep stdin open for `StartedProcess.finish`; `stdin` is then sent at the start (as much as
    # the pipe takes at once) and `finish`'s input after it
    stdin_later: bool = False
    keep_fds: tuple[int, ...] = ()  # inherited at their own numbers, as the side pipe's


class Pipe:
    """A pipe whose ends sit at fd >= 10 (never fd 3), close-on-exec until passed on."""

    def __init__(self, size: int = 0) -> None:
        read_fd, write_fd = os.pipe()
        self.read_fd = _move_high(read_fd)
        self.write_fd = _move_high(write_fd)
        if size:
            _grow_pipe(self.write_fd, size)

    def close_write(self) -> None:
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1

    def close(self) -> None:
        self.close_write()
        if self.read_fd >= 0:
            os.close(self.read_fd)
            self.read_fd = -1


def _grow_pipe(fd: int, size: int) -> None:
    """Best effort: the kernel caps a pipe's size (fs.pipe-max-size) and may refuse."""
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, size)


def run_process(spec: ProcessSpec, side: Pipe | None = None) -> SandboxResult:
    """Run `spec.argv`; `side`'s write end is passed at its own fd number (both ends are closed).

    A command that does not exist (or cannot be executed) exits 127 (126), as in a shell; a
    missing working directory or a failure of our own machinery is an InfraError.
    """
    started = start_process(spec, side)
    if isinstance(started, SandboxResult):
        return started
    return started.finish(spec.stdin, spec.timeout_s)


def start_process(spec: ProcessSpec, side: Pipe | None = None) -> StartedProcess | SandboxResult:
    """Start `spec.argv` with its stdin left open; `finish` sends the input and supervises it.

    Everything up to the exec (cgroups, limits, fd 3) happens now, so a warm start costs
    nothing when the work arrives; the wall-clock limit counts from `finish`.
    """
    # room for a whole grade's frames: the runner never waits on the host reading (or parsing)
    channel = Pipe(CHANNEL_PIPE_BYTES) if spec.channel else None
    group = Cgroup.create(spec.limits, spec.pids_overhead, track=spec.track_tree)
    started: StartedProcess | None = None
    try:
        proc = _spawn(spec, channel, side, group)
        for pipe in (channel, side):
            if pipe is not None:
                pipe.close_write()
        group.close_join_fds()
        if isinstance(proc, SandboxResult):
            return proc
        started = StartedProcess(spec, proc, channel, side, group)
        if spec.stdin_later:
            started.send_ahead()
        return started
    finally:
        if started is None:
            _release(channel, side, group)


def _release(channel: Pipe | None, side: Pipe | None, group: Cgroup) -> None:
    for pipe in (channel, side):
        if pipe is not None:
            pipe.close()
    group.remove()


class StartedProcess:
    """A started process waiting for its stdin; finish it once, or cancel it."""

    def __init__(
        self,
        spec: ProcessSpec,
        proc: subprocess.Popen[bytes],
        channel: Pipe | None,
        side: Pipe | None,
        group: Cgroup,
    ) -> None:
        self.spec, self.proc, self.channel, self.side, self.group = spec, proc, channel, side, group
        self.done = False
        self.unsent = b""  # of what `send_ahead` was to send

    def send_ahead(self) -> None:
        """Write what the pipe takes of `spec.stdin` now (never blocking); the rest goes first
        when the run is finished."""
        self.unsent = self.spec.stdin
        if self.proc.stdin is None or not self.unsent:
            return
        fd = self.proc.stdin.fileno()
        _grow_pipe(fd, STDIN_AHEAD_BYTES)
        os.set_blocking(fd, False)
        # a full pipe, or a command already gone: `finish` sees to it
        with contextlib.suppress(BlockingIOError, BrokenPipeError):
            self.unsent = self.unsent[os.write(fd, self.unsent) :]

    def finish(self, stdin: bytes, timeout_s: float, stop: StopWhen | None = None) -> SandboxResult:
        assert not self.done, "a started process is finished once"
        self.done = True
        spec = dataclasses.replace(self.spec, stdin=self.unsent + stdin, timeout_s=timeout_s)
        try:
            return _Supervisor(self.proc, spec, self.group, stop).run(self.channel, self.side)
        finally:
            _release(self.channel, self.side, self.group)

    def kill(self) -> None:
        """Kill the tree `finish` supervises in another thread (which then returns)."""
        self.group.kill_tree(self.proc.pid)

    def cancel(self) -> None:
        """Kill it unused (a warm process nobody needs any more)."""
        if self.done:
            return
        self.done = True
        try:
            self.group.kill_tree(self.proc.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=GRACE_S * 2)
            for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        finally:
            _release(self.channel, self.side, self.group)


def _spawn(
    spec: ProcessSpec, channel: Pipe | None, side: Pipe | None, group: Cgroup
) -> subprocess.Popen[bytes] | SandboxResult:
    limits = spec.limits
    if limits.address_space_mb is None and not group.controls("memory"):
        limits = dataclasses.replace(limits, address_space_mb=limits.memory_mb)
    try:
        return spawn(
            spec.argv,
            dict(spec.env),
            spec.cwd,
            subprocess.PIPE if spec.stdin or spec.stdin_later else subprocess.DEVNULL,
            limits,
            channel.write_fd if channel else -1,
            ((side.write_fd,) if side else ()) + spec.keep_fds,
            group.join_fds,
        )
    except (FileNotFoundError, PermissionError) as exc:
        if exc.filename == spec.cwd:
            raise InfraError(f"cannot start {spec.argv[0]!r}: {exc}") from exc
        code = 127 if isinstance(exc, FileNotFoundError) else 126
        message = f"{exc.filename}: {exc.strerror}\n".encode()
        return SandboxResult(exit_code=code, timed_out=False, duration_s=0.0, stderr=message)
    except (OSError, subprocess.SubprocessError) as exc:
        raise InfraError(f"cannot start {spec.argv[0]!r}: {exc}") from exc


class _Sink:
    """Keeps the first `cap` bytes read from one fd and drops the rest (noting arrivals)."""

    def __init__(self, cap: int, arrivals: ArrivalLog | None = None) -> None:
        self.cap = cap
        self.data = bytearray()
        self.arrivals = arrivals

    def feed(self, chunk: bytes, at: float) -> None:
        room = self.cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]
            if self.arrivals is not None:
                self.arrivals.note(min(room, len(chunk)), at)


class _Supervisor:
    """One selector loop over the outputs, stdin, the leader's exit (pidfd) and the wall clock."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        spec: ProcessSpec,
        group: Cgroup,
        stop: StopWhen | None = None,
    ) -> None:
        self.proc, self.group, self.stdin = proc, group, memoryview(spec.stdin)
        self.stop = stop
        self.stopped = False
        self.started = time.monotonic()
        self.deadline = self.started + spec.timeout_s
        self.stop_at: float | None = None  # once the tree is gone: stop draining by then
        self.ended: float | None = None
        self.timed_out = False
        self.cap = spec.limits.output_bytes
        self.sel = selectors.DefaultSelector()
        self.pidfd = _pidfd(proc.pid)

    def run(self, channel: Pipe | None, side: Pipe | None) -> SandboxResult:
        assert self.proc.stdout is not None and self.proc.stderr is not None
        arrivals = ArrivalLog()
        sinks = [_Sink(self.cap), _Sink(self.cap), _Sink(self.cap, arrivals), _Sink(SIDE_CAP)]
        fds = [self.proc.stdout.fileno(), self.proc.stderr.fileno()]
        fds += [channel.read_fd if channel else -1, side.read_fd if side else -1]
        try:
            self._register(fds, sinks)
            while self.ended is None or self._draining():
                if not self._step():
                    break
        finally:
            if self.ended is None:
                self._end()
            self._close()
        assert self.ended is not None
        return SandboxResult(
            exit_code=None if self.timed_out else _shell_code(self.proc.returncode),
            timed_out=self.timed_out,
            duration_s=self.ended - self.started,
            stdout=bytes(sinks[0].data),
            stderr=bytes(sinks[1].data),
            channel=bytes(sinks[2].data),
            side=bytes(sinks[3].data),
            channel_arrivals=arrivals.freeze(),
            stopped=self.stopped,
        )

    def _register(self, fds: list[int], sinks: list[_Sink]) -> None:
        for fd, sink in zip(fds, sinks, strict=True):
            if fd >= 0:
                self.sel.register(fd, selectors.EVENT_READ, sink)
        if self.pidfd >= 0:
            self.sel.register(self.pidfd, selectors.EVENT_READ, "exit")
        if self.proc.stdin is not None:
            os.set_blocking(self.proc.stdin.fileno(), False)
            self.sel.register(self.proc.stdin.fileno(), selectors.EVENT_WRITE, "stdin")

    def _step(self) -> bool:
        """Wait for one round of events; False once draining must stop."""
        now = time.monotonic()
        if self.ended is None and now >= self.deadline:
            self.timed_out = True
            self._end()
        if self.stop_at is not None and now >= self.stop_at:
            return False
        wait = min((self.stop_at or self.deadline) - now, WAIT_SLICE_S)
        if self.pidfd < 0 and self.ended is None:
            wait = min(wait, 0.02)  # no pidfd: poll for the leader's exit
        events = self.sel.select(max(wait, 0.0))
        for key, _ in events:
            if key.fd not in self.sel.get_map():
                continue  # unregistered by an earlier event of this round (the exit closes stdin)
            if isinstance(key.data, _Sink):
                chunk = os.read(key.fd, CHUNK)
                if chunk:
                    at = time.monotonic()
                    key.data.feed(chunk, at)
                    if self._stops(key.data, chunk, at):
                        self.stopped = True
                        self._end()
                else:
                    self.sel.unregister(key.fd)
            elif key.data == "stdin":
                self._push()
            elif self.ended is None:
                self._end()
        if self.pidfd < 0 and self.ended is None and _has_exited(self.proc.pid):
            self._end()
        if len(events) == 1 and self.ended is None:
            time.sleep(BATCH_S)
        return True

    def _stops(self, sink: _Sink, chunk: bytes, at: float) -> bool:
        """Whether the caller's `stop` ends the run on this chunk of the results channel."""
        channel = sink.arrivals is not None
        return channel and self.stop is not None and self.ended is None and self.stop(chunk, at)

    def _push(self) -> None:
        assert self.proc.stdin is not None
        try:
            written = os.write(self.proc.stdin.fileno(), self.stdin[:CHUNK])
        except BlockingIOError:
            return
        except OSError:  # the child closed its stdin: the rest is dropped
            written = len(self.stdin)
        self.stdin = self.stdin[written:]
        if not self.stdin:
            self._close_stdin()

    def _end(self) -> None:
        """Kill what is left of the tree (the leader is not reaped yet), then reap the leader."""
        self._close_stdin()
        if self.pidfd >= 0 and self.pidfd in self.sel.get_map():
            self.sel.unregister(self.pidfd)
        self.group.kill_tree(self.proc.pid)
        try:
            self.proc.wait(timeout=GRACE_S * 2)
        except subprocess.TimeoutExpired as exc:
            raise InfraError(f"sandboxed process {self.proc.pid} survived SIGKILL") from exc
        self.ended = time.monotonic()
        self.stop_at = self.ended + GRACE_S

    def _draining(self) -> bool:
        return any(isinstance(key.data, _Sink) for key in self.sel.get_map().values())

    def _close_stdin(self) -> None:
        stream = self.proc.stdin
        if stream is not None and not stream.closed:
            if stream.fileno() in self.sel.get_map():
                self.sel.unregister(stream.fileno())
            with contextlib.suppress(OSError):
                stream.close()

    def _close(self) -> None:
        self.sel.close()
        if self.pidfd >= 0:
            os.close(self.pidfd)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _pidfd(pid: int) -> int:
    try:
        return os.pidfd_open(pid)
    except (OSError, AttributeError):  # Linux < 5.3: poll instead
        return -1


def _has_exited(pid: int) -> bool:
    """Without reaping it (so its pid and process group stay reserved)."""
    flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
    try:
        return os.waitid(os.P_PID, pid, flags) is not None
    except ChildProcessError:
        return True


def _shell_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def _move_high(fd: int) -> int:
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, _HIGH_FD)
    os.close(fd)
    return high
