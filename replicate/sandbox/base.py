"""The sandbox plug-in interface: run one command in isolation and return what happened.

A sandbox runs `argv` with an exact environment (nothing inherited), a working directory, and a
file-system view made of the base system (the shell's programs, libc, and the interpreter's
standard library — never a site-packages or dist-packages folder) plus the `mounts` of the
request.  A mount makes `source` (a host path) visible at `target` inside; most mounts use the
same path on both sides.

The optional results channel is a pipe whose write end is fd 3 in the sandboxed process; whatever
is written there comes back as `SandboxResult.channel`, apart from stdout and stderr, with
`channel_arrivals`: when each part of it reached the host, by the host's clock
(`replicate.sandbox.arrivals`, `replicate.jail.calltime`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

CHANNEL_FD = 3
# The longest a supervisor sleeps in one `select`: a SIGINT/SIGTERM whose Python handler is
# pending in the main thread (the signal landed just before the wait, or another thread took
# it) runs by then instead of at the run's deadline (see `replicate.executors.waiting`).
WAIT_SLICE_S = 0.5
Arrival = tuple[int, float]  # (bytes of the channel received so far, host monotonic time)


@dataclass(frozen=True)
class Mount:
    """A host path (`source`) shown at `target` inside, both absolute; read-only unless
    `writable`. A backend refuses a relative path (`ValueError`) and a missing source
    (`InfraError`) before starting anything."""

    source: str
    target: str
    writable: bool = False

    @classmethod
    def same(cls, path: str, *, writable: bool = False) -> Mount:
        return cls(source=path, target=path, writable=writable)


@dataclass(frozen=True)
class Limits:
    """Resource limits; `None` means none.

    `memory_mb` caps the memory of the whole process tree (a cgroup where the machine allows one,
    else a per-process address-space limit); `address_space_mb` additionally caps each process's
    address space (RLIMIT_AS), which some runtimes (Node's WebAssembly) cannot live with.
    """

    memory_mb: int | None = 2048
    address_space_mb: int | None = None
    pids: int | None = 256
    file_size_mb: int | None = 256
    output_bytes: int = 4_000_000


@dataclass(frozen=True)
class SandboxRequest:
    """One command to run. `argv[0]` is a path inside the sandbox's view (the base system or a
    mount); `env` is the whole environment (nothing of the host's is added); `cwd` a path inside.
    `timeout_s` bounds the wall clock from start to exit, the whole tree killed at it. `stdin`
    is written to the command's stdin, which is then closed. `network`: False means no network
    at all (an isolating backend gives the command no interface but loopback); True shares the
    host's. `channel`: open the results channel at fd `CHANNEL_FD`. `limits` hold for the whole
    process tree. A request is plain data: a backend may run it in another process or machine,
    and runs the same request the same way every time."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: str
    timeout_s: float
    mounts: tuple[Mount, ...] = ()
    stdin: bytes = b""
    network: bool = False
    channel: bool = False
    limits: Limits = field(default_factory=Limits)
    keep_fds: tuple[int, ...] = ()  # host fds the command inherits at their numbers (local only)


@dataclass(frozen=True)
class SandboxResult:
    """What one sandboxed (or plain) process did: the one result type of every backend and of
    `replicate.sandbox.process`.  `exit_code` is None on timeout; death by signal N is
    128 + N, as a shell reports it.  `channel_arrivals` is () for a backend that notes none;
    `side` (a backend's own status pipe) and `stopped` (ended by the caller's `stop` while the
    command ran) are the process layer's, read by the backend that asked for them."""

    exit_code: int | None
    timed_out: bool
    duration_s: float
    stdout: bytes = b""
    stderr: bytes = b""
    channel: bytes = b""
    channel_arrivals: tuple[Arrival, ...] = ()
    side: bytes = b""
    stopped: bool = False


class SandboxUnavailable(RuntimeError):
    """The backend cannot run on this machine (missing binary, no engine)."""


class Sandbox(Protocol):
    """One method to run a command; `name` is the registry key (`replicate.sandbox._BACKENDS`).

    `isolated` is True for a backend that shows the command only the base system and the
    request's mounts, no network unless asked, and no other process of the host's (`local`,
    `docker`); False for `plain`, which runs it as a child of this process with the request's
    environment and limits only (tests/contract/test_sandbox_contract.py holds every backend to
    this, the second half only isolating ones). A backend is built once per process
    (`get_sandbox`), with no arguments; its constructor may probe the machine (a trial run)
    and raises `SandboxUnavailable` (one line: what to install or start) when it cannot run
    here."""

    name: str
    isolated: bool

    def run(self, request: SandboxRequest) -> SandboxResult:
        """Run `request` to its end and report it; called from many threads at once (each
        stage that runs code, every candidate's grade), so a backend keeps no per-run state
        on itself.

        Returns whatever the command did: its exit, a timeout (`timed_out`, `exit_code`
        None), a death by signal, outputs capped at `limits.output_bytes` each. A failure
        of the command is a result, never an exception. Raises `InfraError` (one line) only
        when the machine failed the run (the sandbox could not be set up, the engine lost
        the container) and `ValueError` for a malformed request (a relative mount path).
        Never leaves a process of the command's tree, a mount or a scratch folder behind,
        whether the run ended, timed out or this thread was interrupted; never reads the
        channel's or the outputs' bytes as anything but data (they are the candidate's)."""
        ...


# given each new chunk of the channel and its host arrival time (monotonic): end the run now?
StopWhen = Callable[[bytes, float], bool]


class Started(Protocol):
    """A sandboxed command already running, waiting for its stdin: the request's `stdin` was
    sent when it started, `finish`'s `stdin` follows it, then the stdin is closed.

    `stop`, when given, sees every chunk of the results channel as it arrives; once it returns
    True the command's whole tree is killed and the run ends as if the command had exited (not
    a timeout): the caller has learnt what it needed (a mutant's first wrong answer)."""

    def finish(
        self, stdin: bytes, timeout_s: float, stop: StopWhen | None = None
    ) -> SandboxResult: ...

    def cancel(self) -> None:
        """Give up a started command that will not be finished: its tree killed, what it
        held released (a warm pool's slot its job never came to)."""

    def kill(self) -> None:
        """Kill the command's whole tree while `finish` supervises it in another thread (which
        then returns as if the command had exited)."""


@runtime_checkable
class WarmStart(Protocol):
    """A sandbox that can start a command before its input is known (the warm path).

    Optional: the jail checks `isinstance(sandbox, WarmStart)` and starts cold without it."""

    def start(self, request: SandboxRequest) -> Started:
        """Set the command up and start it, its stdin held open (the request's `stdin`
        already written): `Started.finish` gives it the rest and reports as `run` would.
        Raises as `run` does; a caller that never finishes it calls `cancel`."""
        ...
