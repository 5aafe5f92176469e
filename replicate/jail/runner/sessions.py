"""A session: one runner sealed against its children, forking a child per request read from
an inherited pipe (``replicate.jail.session`` on the host side)."""

from __future__ import annotations

import builtins
import gc
import os
import time
from typing import Any

from .base import _EXITED, _PID, _getpid, _json_loads, _os_exit, _type, wire
from .byvalue import _load_by_value
from .channel import _Channel
from .importing import _HELD, _SHIPPED, _Held
from .job import run
from .preloading import _preload
from .processes import _DUMPABLE, _PR_SET_DUMPABLE, _UNSEALED, _last_pid, _reap, _seal, _spend_pid

globals()["__builtins__"] = dict(builtins.__dict__)  # see base


def run_session(session: wire.SessionSetup) -> None:
    """Run programs (gen's own, or candidates' with ``candidates``: see
    `replicate.jail.session`), each in a child forked from this process, one request after
    another: a request (a line of JSON on the inherited ``requests_fd`` pipe) holds a job,
    which the child runs as `run` does, and for gen's programs names a program file, copied
    over the target's file (bound writable for this; the host writes candidates' itself).  Once
    the child has exited, been killed at the request's time limit or by a ``kill`` request,
    this process kills what the child left running, empties /tmp and /dev/shm (so the next
    child finds the jail as a fresh one would be) and writes an ``exited`` frame under the
    run's nonce, marked.  Ends the process at an ``end`` request or when the pipe closes; at
    once, when a session for candidates cannot be sealed."""
    fd = int(session.get("channel_fd", 3))
    requests = _Requests(int(session["requests_fd"]))
    sealed = _seal()
    if session.get("candidates") is True and not sealed:
        _os_exit(_UNSEALED)  # the host grades its candidates in jails of their own instead
    residue = session.get("pid_residue")
    own_pids = session.get("own_pids") is True
    if session.get("by_value") is True:
        _load_by_value()  # as a job that needs it would, before any code of the repository runs
    _preload(session.get("preload"), requests.fd, own_pids)
    gc.collect()
    gc.freeze()  # the children inherit every object: a collection there need not visit them
    held = _Held()
    if session.get("candidates") is not True:  # candidates' sessions: each file compiled anew
        _HELD[:] = [held]
    elif _type(session.get("code_file")) is str:  # or by the host
        _SHIPPED[:] = [str(session["file"]), str(session["code_file"])]
    while True:
        request = requests.next()
        if request is None or request.get("end") is True:
            _os_exit(0)
        if "k" not in request:
            continue  # a kill for a child already gone
        if "program" in request:  # else the host wrote it, the file is read-only here
            with open(request["program"], "rb") as source, open(session["file"], "r+b") as target:
                program = source.read()
                target.truncate(0)  # same inode: the bind shows it
                target.write(program)
            held.offer(str(session["file"]), program)
        job = request["job"]
        if job.get("by_value") is True:
            _load_by_value()  # our own shipped module: once here, not once per child
        if _type(residue) is int:
            _align_pid(residue, requests.fd)
        started = time.monotonic()
        deadline = started + float(request["timeout_s"])
        child = _fork_job(job, requests.fd)
        status, timed_out = _reap(child, deadline, requests, request["k"], own_pids)
        frame = {"event": _EXITED, "k": request["k"], "status": status, "timed_out": timed_out}
        channel = _Channel(fd, wire.EXITED_MARK + str(job["nonce"]))  # only this run knew it
        channel.write("\n" + channel.frame({**frame, "s": time.monotonic() - started}))


class _Requests:
    """A session's requests, one JSON object per line of a pipe."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buffer = fd, b""
        self.lines: list[Any] = []

    def next(self) -> dict[str, Any] | None:
        """The next request, waiting for it; None once the pipe has closed."""
        while not self.lines:
            if not self.read():
                return None
        return self.lines.pop(0)

    def read(self) -> bool:
        """Take what the pipe holds (one read); False at its end."""
        chunk = os.read(self.fd, 1 << 16)
        *whole, self.buffer = (self.buffer + chunk).split(b"\n")
        self.lines += [_json_loads(line) for line in whole if line.strip()]
        return bool(chunk)


def _fork_job(job: wire.Job | None, requests_fd: int) -> int:
    """A child that runs `job` as a fresh runner would (in its own process group), or exits at
    once without one; its pid."""
    pid = os.fork()
    if pid == 0:
        try:
            os.close(requests_fd)
            _PID[:] = [_getpid()]
            os.setpgid(0, 0)
            if _DUMPABLE:
                _DUMPABLE[0](_PR_SET_DUMPABLE, 1, 0, 0, 0)  # as any process is; the session is not
            if job is not None:
                run(job)
        finally:
            _os_exit(70)  # never back into the session's loop
    try:  # noqa: SIM105 - contextlib is one import more in every jail
        os.setpgid(pid, pid)  # whichever of the two runs first
    except OSError:  # the child has run (and may have exited) already
        pass
    return pid


def _align_pid(residue: int, requests_fd: int) -> None:
    """Start and reap children that exit at once until the next pid is `residue` modulo
    wire.PID_MODULUS (see replicate.jail.session: pids); nothing else forks here then, as the
    last child's leftovers are killed."""
    last = _last_pid()
    for _ in range(2 * wire.PID_MODULUS):
        if last is not None and (last + 1) % wire.PID_MODULUS == residue:
            return
        if last is not None:
            last = _spend_pid()
        else:  # the kernel does not tell: a child's pid says it
            last = _fork_job(None, requests_fd)
            os.waitpid(last, 0)
