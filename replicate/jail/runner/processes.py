"""A session's care of its processes: each child's pid aligned to the session's residue, the
children reaped and their groups killed, the jail swept clean between runs, the session sealed
(non-dumpable) against its children."""

from __future__ import annotations

import builtins
import os
import select
import signal
import time
from typing import TYPE_CHECKING, Any

from .base import _getpid, _os_exit, _sys_modules, wire

if TYPE_CHECKING:
    from .sessions import _Requests

globals()["__builtins__"] = dict(builtins.__dict__)  # see base


_NO_PROGRAM = "/proc/0/replicate"  # no process 0 in /proc, and nothing can make one


def _spend_pid() -> int | None:
    """Use up one pid as cheaply as the kernel allows: a spawn whose program does not exist is
    a child sharing this process's memory (no page tables copied) that exits at its failed exec
    and is reaped by the C library (~0.1 ms; forking this runner and reaping it took ~1.5 ms,
    three times in most runs of a gen session).  The last pid given out, after it."""
    try:
        pid = os.posix_spawn(_NO_PROGRAM, [_NO_PROGRAM], {})
    except OSError:  # the exec failed, as it must: the child is gone already
        return _last_pid()
    os.waitpid(pid, 0)  # never here in practice
    return pid


def _last_pid() -> int | None:
    """The last pid given out in this pid namespace, where the kernel tells it."""
    try:
        with open("/proc/sys/kernel/ns_last_pid", "rb") as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return None


def _reap(
    pid: int, deadline: float, requests: _Requests, k: object, own_pids: bool
) -> tuple[int, bool]:
    """Wait for a session's child until `deadline` or a ``kill`` request for it, then kill its
    group and whatever else it left; its exit code (128 + N for signal N) and whether the
    deadline killed it."""
    pidfd = os.pidfd_open(pid)
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([pidfd, requests.fd], [], [], max(left, 0.0))
            if pidfd in ready:
                break
            killed = not ready or not requests.read() or {"kill": k} in requests.lines
            if killed:
                timed_out = not ready
                _kill_group(pid)
                break
    finally:
        os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    _tidy(own_pids)
    code = os.waitstatus_to_exitcode(status)
    return (128 - code if code < 0 else code), timed_out


def _kill_group(pid: int) -> None:
    try:  # noqa: SIM105 - as above
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _tidy(own_pids: bool) -> None:
    """After a child: every other process of the jail's pid namespace killed (but its init and
    this one), /tmp and /dev/shm emptied.  With `own_pids` (the jail has a pid namespace of its
    own) by ``kill(-1, SIGKILL)``, which no fork can slip past; else by pid, pass after pass.
    Either repeats until no process is left; one that will not go ends the session, so nothing a
    child left can meet the next child."""
    mine = {1, _getpid()}
    for attempt in range(_SWEEPS):
        others = [int(name) for name in os.listdir("/proc") if name.isdigit()]
        others = [pid for pid in others if pid not in mine and not _gone(pid)]
        if not others:
            break
        for pid in [-1] if own_pids else others:
            try:  # noqa: SIM105 - as above
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.001 * attempt)
    else:
        _os_exit(_UNCLEAN)
    for folder in ("/tmp", "/dev/shm"):
        _empty(folder)


_SWEEPS = 200
_UNCLEAN = 72  # a process outlived every sweep: the session ends


def _gone(pid: int) -> bool:
    """Whether `pid` is a zombie (dead, waiting for its init to reap it)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] in (b"Z", b"X")


_PR_SET_DUMPABLE = 4
_UNSEALED = wire.UNSEALED_EXIT  # the session ends: the host runs jails of their own instead
_DUMPABLE: list[Any] = []  # prctl, kept from `_seal` for the children


def _seal() -> bool:
    """Keep the session's process out of its children's reach: it is not dumpable, so a child of
    the same user can neither read its memory nor open its descriptors (the requests pipe among
    them) through /proc, nor trace it.  ctypes is imported for prctl and taken out of
    ``sys.modules`` again, so a child's modules are those of a fresh runner.  False when it
    cannot be done."""
    before = set(_sys_modules)
    try:
        import ctypes  # only a session needs it, and only once

        prctl = ctypes.CDLL(None, use_errno=True).prctl
        sealed = prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (ImportError, OSError, AttributeError):
        return False
    finally:
        for name in set(_sys_modules) - before:
            del _sys_modules[name]
    if sealed:
        _DUMPABLE[:] = [prctl]
    return sealed


def _empty(folder: str) -> None:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                _empty(entry.path)
                os.rmdir(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            continue
