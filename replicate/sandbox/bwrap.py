"""The `local` sandbox: bubblewrap namespaces around the whitelisted base system.

Every namespace is new (user, mount, pid, ipc, uts, cgroup, and network unless the request asks for
it); all capabilities are dropped (as root, bwrap otherwise keeps them, and the sandboxed program
could unmount what hides the package folders); nested user namespaces are refused.  The file system
is a read-only tmpfs root holding the base `SystemView`, a fresh /proc, a minimal /dev, size-capped
tmpfs on /tmp and /dev/shm, and the request's mounts.  bwrap reports on a status pipe whether the
command really started: a sandbox that failed to set up is an `InfraError`, never a result.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from collections.abc import Sequence

from replicate import jsonl
from replicate.errors import InfraError
from replicate.sandbox.base import (
    Limits,
    Mount,
    SandboxRequest,
    SandboxResult,
    SandboxUnavailable,
    StopWhen,
)
from replicate.sandbox.process import (
    Pipe,
    ProcessSpec,
    StartedProcess,
    start_process,
)
from replicate.sandbox.system import SystemView, system_view

MISSING_HINT = "bubblewrap (bwrap) not found; apt-get install bubblewrap"
NAMESPACE_FLAGS = (
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
    "--hostname",
    "sandbox",
)
DEFAULT_TMPFS_MB = 1024
ENV_BINARY = "/usr/bin/env"
BWRAP_PROCESSES = 2  # bwrap's monitor and the pid-1 reaper inside the namespace


class BwrapSandbox:
    """Runs each request in a fresh bubblewrap sandbox."""

    name = "local"
    isolated = True

    def __init__(self, binary: str | None = None) -> None:
        found = binary or shutil.which("bwrap")
        if found is None or not os.access(found, os.X_OK):
            raise SandboxUnavailable(MISSING_HINT)
        _probe(found)
        self.binary = found

    def run(self, request: SandboxRequest) -> SandboxResult:
        return self.start(request).finish(b"", request.timeout_s)  # start sends the stdin

    def start(self, request: SandboxRequest) -> StartedSandbox:
        """Set the sandbox up and start the command now, sending it `request.stdin`; more of its
        stdin arrives with `finish`."""
        check_mounts(request.mounts)
        status = Pipe()
        spec = ProcessSpec(
            argv=self.command(request, status.write_fd),
            env=request.env,
            cwd="/",
            timeout_s=request.timeout_s,
            limits=request.limits,
            channel=request.channel,
            pids_overhead=BWRAP_PROCESSES,
            track_tree=False,  # the pid namespace dies with its init: nothing escapes
            stdin=request.stdin,
            stdin_later=True,
            keep_fds=request.keep_fds,
        )
        try:
            started = start_process(spec, side=status)
        except BaseException:
            status.close()
            raise
        return StartedSandbox(started, status)

    def command(self, request: SandboxRequest, status_fd: int) -> tuple[str, ...]:
        """The bwrap command line for `request` (the environment is passed, not listed)."""
        argv = [self.binary, *NAMESPACE_FLAGS]
        if request.network:
            argv += ["--share-net", "--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf"]
        argv += base_args(system_view())
        argv += scratch_args(request.limits)
        argv += mount_args(request.mounts)
        argv += ["--remount-ro", "/", "--chdir", request.cwd]
        argv += [
            "--json-status-fd",
            str(status_fd),
            "--",
            *exact_env_prefix(request),
            *request.argv,
        ]
        return tuple(argv)


class StartedSandbox:
    """A bubblewrap sandbox whose command runs and waits for its stdin (a warm start)."""

    def __init__(self, started: StartedProcess | SandboxResult, status: Pipe) -> None:
        self.started, self.status = started, status

    def finish(self, stdin: bytes, timeout_s: float, stop: StopWhen | None = None) -> SandboxResult:
        try:
            if isinstance(self.started, SandboxResult):
                outcome = self.started
            else:
                outcome = self.started.finish(stdin, timeout_s, stop)
        finally:
            self.status.close()
        if not (outcome.timed_out or outcome.stopped) and not _command_ran(outcome.side):
            raise InfraError(f"sandbox setup failed: {_last_line(outcome.stderr)}")
        return outcome

    def kill(self) -> None:
        if isinstance(self.started, StartedProcess):
            self.started.kill()

    def cancel(self) -> None:
        try:
            if isinstance(self.started, StartedProcess):
                self.started.cancel()
        finally:
            self.status.close()


@functools.cache
def base_args(view: SystemView) -> tuple[str, ...]:
    """bwrap arguments that build `view` (binds, links, then the covers over package folders)."""
    args: list[str] = []
    for path in view.read_only:
        args += ["--ro-bind", path, path]
    for link in view.symlinks:
        args += ["--symlink", link.target, link.path]
    for folder in view.hidden_dirs:
        args += ["--tmpfs", folder, "--remount-ro", folder]
    for path in view.hidden_files:
        args += ["--ro-bind", "/dev/null", path]
    args += ["--proc", "/proc", "--dev", "/dev"]
    return tuple(args)


def scratch_args(limits: Limits) -> list[str]:
    """Fresh size-capped tmpfs on /tmp and /dev/shm (tmpfs pages escape RLIMIT_AS)."""
    size = str((limits.file_size_mb or DEFAULT_TMPFS_MB) << 20)
    return ["--size", size, "--tmpfs", "/tmp", "--size", size, "--tmpfs", "/dev/shm"]


def mount_args(mounts: Sequence[Mount]) -> list[str]:
    """Binds for the request's mounts, outer targets before the ones nested inside them."""
    args: list[str] = []
    for mount in sorted(mounts, key=lambda m: os.path.normpath(m.target).count("/")):
        args += ["--bind" if mount.writable else "--ro-bind", mount.source, mount.target]
    return args


def exact_env_prefix(request: SandboxRequest) -> list[str]:
    """bwrap always sets PWD after its chdir; `env` restores exactly the requested environment.

    Skipped (PWD then stays, equal to the working directory) when `env` is missing or would take
    the command for an assignment.
    """
    if not os.path.exists(ENV_BINARY) or not request.argv or "=" in request.argv[0]:
        return []
    if "PWD" in request.env:
        return [ENV_BINARY, "--", f"PWD={request.env['PWD']}"]
    return [ENV_BINARY, "-u", "PWD", "--"]


def check_mounts(mounts: Sequence[Mount]) -> None:
    """Absolute paths only (ValueError); a missing source is our own fault (InfraError)."""
    for mount in mounts:
        if not (os.path.isabs(mount.source) and os.path.isabs(mount.target)):
            raise ValueError(f"sandbox mount paths must be absolute: {mount}")
        if not os.path.lexists(mount.source):
            raise InfraError(f"sandbox mount source does not exist: {mount.source}")


def _command_ran(status: bytes) -> bool:
    """bwrap writes an `exit-code` document only when the command itself ran and exited."""
    for line in jsonl.split(status.decode("utf-8", "replace")):
        try:
            document = json.loads(line)
        except ValueError:
            continue
        if isinstance(document, dict) and "exit-code" in document:
            return True
    return False


def _last_line(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else "bwrap exited without a message"


@functools.cache
def _probe(binary: str) -> None:
    """One trivial sandbox, so a machine without namespaces fails with a hint, once."""
    argv = [binary, *NAMESPACE_FLAGS, "--ro-bind", "/", "/", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"bubblewrap cannot run here: {exc}") from exc
    if done.returncode != 0:
        raise SandboxUnavailable(
            f"bubblewrap cannot create a sandbox here: {_last_line(done.stderr)}"
        )
