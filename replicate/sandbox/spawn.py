"""Start one child for `process.run_process`: cgroups joined, limits set, results channel at fd 3.

The child's setup runs in a small stub, not in `preexec_fn`: with a `preexec_fn`, Popen must
`fork()` this whole process, and `gen` holds over a GB while it starts thousands of jails
(a fork of a 1.6 GB process measured 55 ms, most of it copying page tables, plus the
copy-on-write faults that follow in every thread).  Without one, Popen uses `vfork()` (0.6 ms)
and execs the stub: `bash` (started with an empty environment, so never in POSIX mode) writes
to the cgroups' join fds, sets RLIMIT_CORE/AS/FSIZE with `ulimit`, moves the channel onto fd 3,
closes what it used, then `exec -c env -- NAME=VALUE... argv`: the command gets exactly
`spec.env` (bash adds SHLVL and PWD to what it execs, `env` does not).

A failed setup exits `SETUP_FAILED` with a message on stderr.  Where the stub cannot be used
(no bash or env, or an argv[0] with "=" that env would take for a variable), the setup runs
in `preexec_fn` as before.

fd 3 is never passed by number: the child would first mark the parent's fd 3 inheritable, and
it may be another thread's, closed at that moment (EBADF in stop 8's CI).
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import subprocess
from collections.abc import Sequence

from replicate.sandbox.base import CHANNEL_FD, Limits

BASH = "/bin/bash"
ENV = "/usr/bin/env"
SETUP_FAILED = 125
_MB = 1 << 20


@functools.cache
def stub_available() -> bool:
    return all(os.access(path, os.X_OK) for path in (BASH, ENV))


def spawn(
    argv: Sequence[str],
    env: dict[str, str],
    cwd: str | None,
    stdin: int,
    limits: Limits,
    channel_fd: int,
    keep_fds: tuple[int, ...],
    join_fds: tuple[int, ...],
) -> subprocess.Popen[bytes]:
    """Start `argv` in a new session; `keep_fds` stay at their numbers, `channel_fd` (or -1)
    becomes fd 3.  OSError and SubprocessError propagate (cwd missing, command missing)."""
    if stub_available() and "=" not in argv[0]:
        stub = _stub(limits, channel_fd, join_fds)
        assignments = [f"{name}={value}" for name, value in env.items()]
        passed = tuple(fd for fd in (*keep_fds, *join_fds, channel_fd) if fd >= 0)
        return subprocess.Popen(
            [BASH, "--norc", "--noprofile", "-c", stub, "replicate-setup", *assignments, *argv],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={},
            cwd=cwd,
            start_new_session=True,
            pass_fds=passed,
        )
    setup = functools.partial(
        _child_setup, limits=limits, channel_fd=channel_fd, keep=keep_fds, join_fds=join_fds
    )
    return subprocess.Popen(
        list(argv),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=True,
        close_fds=False,
        preexec_fn=setup,
    )


def _stub(limits: Limits, channel_fd: int, join_fds: tuple[int, ...]) -> str:
    steps = [f"printf 0 >&{fd}" for fd in join_fds]
    steps.append("ulimit -c 0")
    if limits.address_space_mb is not None:  # bash: -v and -f in KiB outside POSIX mode
        steps.append(f"ulimit -v {limits.address_space_mb * 1024}")
    if limits.file_size_mb is not None:
        steps.append(f"ulimit -f {limits.file_size_mb * 1024}")
    # the join fds first: one may be fd 3 itself (they are opened at the lowest free number)
    moves = [f"{fd}>&-" for fd in join_fds]
    moves += [f"3>&{channel_fd}", f"{channel_fd}>&-"] if channel_fd >= 0 else []
    failed = f"{{ echo 'replicate: sandbox setup failed' >&2; exit {SETUP_FAILED}; }}"
    return (
        " && ".join(steps)
        + f" || {failed}\n"
        + (f"exec {' '.join(moves)} || {failed}\n" if moves else "")
        + f'exec -c {ENV} -- "$@"\n'
    )


def _child_setup(
    limits: Limits, channel_fd: int, keep: tuple[int, ...], join_fds: tuple[int, ...]
) -> None:
    """The fallback: runs in the child between fork and exec (see the module docstring)."""
    for fd in join_fds:
        os.write(fd, b"0")
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for limit, megabytes in (
        (resource.RLIMIT_AS, limits.address_space_mb),
        (resource.RLIMIT_FSIZE, limits.file_size_mb),
    ):
        if megabytes is not None:
            resource.setrlimit(limit, (megabytes * _MB, megabytes * _MB))
    kept = set(keep)
    if channel_fd >= 0:
        os.dup2(channel_fd, CHANNEL_FD)
        kept.add(CHANNEL_FD)
    for fd in map(int, os.listdir("/proc/self/fd")):
        if fd > 2:
            with contextlib.suppress(OSError):  # the listing's own fd, closed by now
                os.set_inheritable(fd, fd in kept)
