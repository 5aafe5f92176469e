"""One jail for many runs on one target file: a forked child per run.

Most of what a run costs is starting its jail: bubblewrap and its cgroup, the interpreter and
the runner's standard-library imports, ~50 ms of CPU before the first call, against a few ms for
the calls of a typical target. Minting one target takes twenty-odd runs of our own programs (the
reference under two hash seeds, its re-grade, the degenerate programs, a dozen mutants,
searches), and a reward server grades thousands of candidates of the same few files. So a
session keeps one jail per target file, hash seed and clock (and, for candidates, memory
limit) and runs them there: the runner does its setup once, then per request copies the
program over the target's file (bound writable for this) and forks a child that runs the job
exactly as a fresh runner would (`runner.sessions.run_session`). After the child, the runner kills
whatever it left running (``kill(-1)`` in the jail's own pid namespace, until none is left)
and empties /tmp and /dev/shm, then writes an ``exited`` frame under the run's own nonce
(marked, `wire.EXITED_MARK`); the host cuts the channel there and reads each run's part as a
run of its own (the per-call limit held on the host's clock included).

Every session is sealed against its children (`runner.processes._seal`): its requests come on a pipe
whose read end the jail inherits (no name to open it by; each child closes it) and the runner
makes itself non-dumpable, so a child can neither read nor inject requests nor reach the
runner's memory or descriptors through /proc. For candidates the target's file is bound
read-only and the host writes each program into it between runs (gen's own programs are copied
in from inside, the file bound writable for that).
A run's ``exited`` frame is under a nonce only that run's job held, so a child that forges one
ends only its own run early. What the children still share is the runner's state before any
program ran (its imports, and the modules it imported for its children: `replicate.jail.preload`),
and one memory layout: two children of one session give
a value that depends on `id()` alike. So the determinism checks compare runs of *different*
sessions: the golden runs' two hash seeds at gen, and a candidate's second run in a session of
its own (`replicate.jail.candidates`). A child is not pid 2, as the runner of a jail of its own
always is, and its parent is the session's process: at gen, a value that depends on the pid is
made to differ between sessions whatever runs each served before (`pid_residue`: each child's
pid has its session's residue modulo 4), so such a target is dropped as nondeterministic rather
than minted with a pid no grade will give. Gen's sessions (`replicate.jail.series`) send a
series' requests together (our own programs); candidates' sessions send one request at a time,
the next only once the last run's ``exited`` frame is in, so no child ever holds another's job.
A run a session cannot give (the jail died, a run outlived its limit by more than the grace the
host allows, or a signal is ending the process) comes back as None, and the caller runs it in a
jail of its own (`Jail.run`: unless a signal is ending the process, when it raises instead).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import secrets
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from replicate.core import CallInput, GradingSettings, Target
from replicate.errors import InfraError
from replicate.jail import wire
from replicate.jail.bytecode import same_magic, shipped_code
from replicate.jail.calls import (
    CHANNEL_CAP,
    JailRun,
    RepoContext,
    RunPlan,
    Until,
    finished_run,
    job_dict,
)
from replicate.jail.calltime import CallClock, LiveFrames
from replicate.jail.frames import read_frame
from replicate.jail.preload import ancestors, preload_plan
from replicate.sandbox import (
    Arrival,
    Mount,
    SandboxResult,
    Started,
    WarmStart,
)
from replicate.scratch import make_dir, remove_dir, stopping

SESSION_S = 24 * 3600.0  # the jail's own limit: a session ends when its owner closes it
GRACE_S = 5.0  # beyond a run's limit before the host gives the session up
SESSION_OUTPUT = 1 << 16  # what the supervisor keeps of the session's own outputs


@dataclass
class Run:
    """One request: its channel part as it arrives, until the session's ``exited`` frame."""

    k: int
    nonce: str
    live: LiveFrames
    until: Until | None
    timeout_s: float
    data: bytearray = field(default_factory=bytearray)
    spill: bytearray = field(default_factory=bytearray)  # past CHANNEL_CAP: only searched
    arrivals: list[Arrival] = field(default_factory=list)
    end: int | None = None  # where the ``exited`` frame starts
    exited: wire.Frame | None = None
    kill_sent: bool = False
    began: float | None = None  # when the run before it ended (or the request was sent)


class Session:
    """A started jail running `runner.sessions.run_session` for one target file, hash seed and
    clock; with `by_value`, the by-value module (`replicate.jail.by_value_module`) loaded before any
    request, where the caller knows its runs' inputs need it (else the first run that needs it
    loads it, once for the session)."""

    def __init__(
        self, sandbox: WarmStart, plan: RunPlan, *, candidates: bool = False, by_value: bool = False
    ) -> None:
        ctx, target = plan.ctx, plan.target
        self.plan = plan
        self.scratch = make_dir("replicate-session-")
        self.candidates = candidates
        from replicate.sandbox.process import Pipe  # a backend's: loaded when used

        pipe = Pipe()  # the requests: its read end is inherited, it has no name in the jail
        self.writer = pipe.write_fd
        self.current = self.scratch / "current.py"
        self.current.write_bytes(b"")
        self.code = self.scratch / "current.code"  # candidates': compiled here (shipped_code)
        self.code.write_bytes(b"")
        self.ship = candidates and ctx.speedups and same_magic(ctx.python)
        self.programs = self.scratch / "programs"  # gen's: copied in from inside
        inside = str(ctx.tree / target.path)
        session: wire.SessionSetup = {
            "requests_fd": pipe.read_fd,
            "file": inside,
            "own_pids": getattr(sandbox, "name", "") == "local",  # bubblewrap: --unshare-pid
        }
        mounts = [
            *ctx.mounts(),
            Mount.same(str(ctx.tree)),
            Mount(str(self.current), inside, writable=not candidates),
        ]
        if by_value:  # loaded before any request, not while the first run waits (~30 ms)
            session["by_value"] = True
        preload = _preload(ctx, target)
        if preload is not None:
            session["preload"] = preload
        if candidates:  # the host writes each program (one run at a time), the jail cannot
            session["candidates"] = True
            if self.ship:
                session["code_file"] = str(self.code)
                mounts.append(Mount.same(str(self.code)))
        else:
            session["pid_residue"] = pid_residue(plan)
            self.programs.mkdir()
            mounts.append(Mount.same(str(self.programs)))
        stdin = json.dumps({"session": session}).encode() + b"\n"
        request = plan.request(ctx.tree, mounts, ctx.bytecode(ctx.tree, target), stdin)
        limits = dataclasses.replace(request.limits, output_bytes=SESSION_OUTPUT)
        request = dataclasses.replace(
            request, timeout_s=SESSION_S, limits=limits, keep_fds=(pipe.read_fd,)
        )
        self.lock = threading.Lock()  # one caller's requests at a time
        self.cond = threading.Condition()
        self.queue: list[Run] = []
        self.count = 0
        self.ended = False
        self.exit_code: int | None = None  # the jail's, once it has ended
        self.closed = False
        try:
            self.started: Started = sandbox.start(request)
        except BaseException:  # no jail: nothing of the session is left behind either
            os.close(self.writer)
            remove_dir(self.scratch)
            raise
        finally:
            os.close(pipe.read_fd)  # the jail's now
        self.thread = threading.Thread(target=self._supervise, name="replicate-session")
        self.thread.daemon = True
        self.thread.start()

    def run_all(
        self,
        inputs: Sequence[CallInput],
        settings: GradingSettings,
        programs: Sequence[bytes],
        *,
        encode_inputs: bool = False,
        until: Until | None = None,
        until_timeout: bool = False,
        target: Target | None = None,
    ) -> list[JailRun | None]:
        """Each program's run on `inputs` (its bytes replace the target's file), in order; None
        for one the session could not give (the session is then closed).  `until` sees each
        result frame of a run as it arrives, and once it holds that run's child is killed (the
        inputs after it get no outcome); `until_timeout`: a run ends at its first timeout.
        `target`: the function to call, of the session's file (the session's own target when
        None)."""
        called = target if target is not None else self.plan.target
        if called.path != self.plan.target.path:
            raise ValueError(f"a session of {self.plan.target.path} cannot run {called.path}")
        flags = (encode_inputs, until_timeout)
        with self.lock:
            # One at a time where the next is written once the last is gone (candidates), or
            # where a run may be cut short: the kill goes down the same pipe, from the thread
            # that reads the frames, and must not meet a request half written.
            if self.candidates or until is not None:
                return [
                    self._wait(
                        self._send(called, program, inputs, settings, flags, until),
                        inputs,
                        settings,
                    )
                    for program in programs
                ]
            runs = [
                self._send(called, program, inputs, settings, flags, until) for program in programs
            ]
            return [self._wait(run, inputs, settings) for run in runs]

    def _send(
        self,
        target: Target,
        program: bytes,
        inputs: Sequence[CallInput],
        settings: GradingSettings,
        flags: tuple[bool, bool],
        until: Until | None,
    ) -> Run | None:
        """The run of `program`, sent; None when the session is closed (a run before it was
        given up on, say, which removed its files), as `_wait` then answers."""
        if self.closed:
            return None
        encode_inputs, until_timeout = flags
        self.count += 1
        k, nonce = self.count, secrets.token_hex(16)
        job = job_dict(target, inputs, settings, encode_inputs)
        job.update({"nonce": nonce, "until_timeout": until_timeout})
        clock = CallClock(tuple(item.index for item in inputs), settings.call_timeout_s)
        run = Run(k, nonce, LiveFrames(nonce, clock), until, settings.total_timeout_s)
        request: dict[str, object] = {"k": k, "job": job, "timeout_s": settings.total_timeout_s}
        try:
            self._write(target, program, k, request)
        except FileNotFoundError:  # closed meanwhile, from another thread
            return None
        with self.cond:
            if not self.queue:
                run.began = time.monotonic()
            self.queue.append(run)
        self._request(request)
        return run

    def _write(self, target: Target, program: bytes, k: int, request: dict[str, object]) -> None:
        """Put the program where the session's runner reads it (a candidate's, compiled too)."""
        if self.candidates:
            with self.current.open("r+b") as handle:  # same inode: the bind shows it
                handle.truncate(0)
                handle.write(program)
            if self.ship:
                shipped = shipped_code(program, str(self.plan.ctx.tree / target.path))
                with self.code.open("r+b") as handle:
                    handle.truncate(0)
                    handle.write(shipped)
        else:
            path = self.programs / f"{k}.py"
            path.write_bytes(program)
            request["program"] = str(path)

    def _request(self, request: dict[str, object]) -> None:
        data = json.dumps(request).encode() + b"\n"
        with contextlib.suppress(OSError):  # a session gone: its runs come back as None
            while data:
                data = data[os.write(self.writer, data) :]

    def _wait(
        self, run: Run | None, inputs: Sequence[CallInput], settings: GradingSettings
    ) -> JailRun | None:
        if run is None:
            return None
        with self.cond:
            while run.exited is None and not self.ended and not stopping():
                began = run.began if run.began is not None else time.monotonic()
                left = began + run.timeout_s + GRACE_S - time.monotonic()
                if left <= 0:
                    break
                self.cond.wait(min(left, 0.2))
        if run.exited is None:
            self.close(kill=True)
            return None
        if not self.candidates:
            (self.programs / f"{run.k}.py").unlink(missing_ok=True)
        return self._finished(run, inputs, settings)

    def _finished(
        self, run: Run, inputs: Sequence[CallInput], settings: GradingSettings
    ) -> JailRun:
        exited = run.exited or {}
        status, seconds = exited.get("status"), exited.get("s")
        timed_out = exited.get("timed_out") is True
        end = run.end if run.end is not None else len(run.data)
        channel = bytes(run.data[:end])
        result = SandboxResult(
            exit_code=None if timed_out else status if type(status) is int else None,
            timed_out=timed_out,
            duration_s=seconds if isinstance(seconds, float) else 0.0,
            channel=channel,
            channel_arrivals=_clipped(run.arrivals, end),
            stopped=run.kill_sent,
        )
        return finished_run(result, run.nonce, inputs, settings, run.live)

    def _supervise(self) -> None:
        try:
            self.exit_code = self.started.finish(b"", SESSION_S, self._feed).exit_code
        except InfraError:
            pass  # the jail did not start or went away: its runs come back as None
        finally:
            with self.cond:
                self.ended = True
                self.cond.notify_all()

    def _feed(self, chunk: bytes, at: float) -> bool:
        """The supervisor's `stop`: each chunk of the channel to the run it belongs to."""
        with self.cond:
            while chunk and self.queue:
                run = self.queue[0]
                chunk, frames = take(run, chunk, at)
                for frame in frames:
                    self._maybe_kill(run, frame)
                if run.exited is None:
                    break
                self.queue.pop(0)
                if self.queue:
                    self.queue[0].began = at
                self.cond.notify_all()
        return False

    def _maybe_kill(self, run: Run, frame: wire.Frame | None) -> None:
        if run.until is None or run.kill_sent or frame is None:
            return
        if frame.get("event") == wire.RESULT and run.until(frame):
            run.kill_sent = True
            self._request({"kill": run.k})

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self, kill: bool = False) -> None:
        """End the session (its jail exits, or is killed with `kill`) and remove its files; once
        (a second close must not close a descriptor number that may have been reused since)."""
        with self.cond:
            if self.closed:
                return
            self.closed = True
        if not kill:
            self._request({"end": True})
            self.thread.join(timeout=GRACE_S)
        if self.thread.is_alive():
            self.started.kill()
            self.thread.join(timeout=GRACE_S)
        with contextlib.suppress(OSError):
            os.close(self.writer)
        remove_dir(self.scratch)


def unsealed(session: Session) -> bool:
    """Whether the session ended because its runner could not seal it (wire.UNSEALED_EXIT)."""
    session.thread.join(timeout=GRACE_S)
    return session.ended and session.exit_code == wire.UNSEALED_EXIT


def _preload(ctx: RepoContext, target: Target) -> wire.Preload | None:
    """The modules the session imports before its children (`preload_plan`); none
    for a target that is a package's ``__init__`` or without the speed-ups (`gen --cold`)."""
    if not ctx.speedups or target.path.endswith("__init__.py"):
        return None
    modules = preload_plan(ctx.sys_path(ctx.tree), target.module)
    if not modules:
        return None
    packages = ancestors(target.module)
    return {"target": target.module, "packages": packages, "modules": list(modules)}


def pid_residue(plan: RunPlan) -> int:
    """What a session's children's pids are modulo wire.PID_MODULUS: different for each hash
    seed and clock gen compares (seed 0; seed 1; seed 2 with the clock moved), so a value that
    depends on the pid differs between the golden runs' sessions, and from the re-grade's, and
    the target is dropped as nondeterministic.  (In a jail of its own the runner is always pid
    2, so such a value is the same in every run and the task grades right; in a session it is
    not 2, and sessions that served different numbers of runs could agree on it: a task whose
    original fails when graded.)"""
    return (1 + plan.hash_seed + (4 if plan.clock_shift_days else 0)) % wire.PID_MODULUS


def take(run: Run, chunk: bytes, at: float) -> tuple[bytes, list[wire.Frame | None]]:
    """Add `chunk` to `run` (its frames parsed as they complete, until the ``exited`` frame the
    session's runner writes under the run's nonce); what is left of the chunk once that frame is
    whole, and the run's frames the chunk completed."""
    prefix = (wire.EXITED_MARK + run.nonce).encode("ascii") + b" "
    start = len(run.data)
    if start >= CHANNEL_CAP and run.end is None:
        return _spilled(run, chunk, prefix), []
    run.data += chunk
    run.arrivals.append((len(run.data), at))
    frames: list[wire.Frame | None] = []
    if run.end is None:
        found = run.data.find(b"\n" + prefix, max(start - len(prefix) - 1, 0))
        run.end = found + 1 if found >= 0 else None
        feed = bytes(run.data[start : run.end]) if run.end is not None else chunk
        frames = run.live.feed(feed, at) if feed else []
    if run.end is None:
        return b"", frames
    line_end = run.data.find(b"\n", run.end)
    if line_end < 0:
        return b"", frames
    run.exited = read_frame(bytes(run.data[run.end : line_end]), prefix) or {}
    rest = bytes(run.data[line_end + 1 :])
    del run.data[line_end + 1 :]
    return rest, frames


def _spilled(run: Run, chunk: bytes, prefix: bytes) -> bytes:
    """Past the channel's cap (a run that floods it): the chunk is not kept, only searched for
    the run's ``exited`` frame (as `take` does); what follows that frame, once it is whole."""
    if not run.spill:  # a marker may have begun at the end of what was kept
        run.spill += run.data[-len(prefix) - 1 :]
    run.spill += chunk
    found = run.spill.find(b"\n" + prefix)
    if found < 0:
        del run.spill[: max(0, len(run.spill) - len(prefix) - 1)]
        return b""
    del run.spill[:found]
    line_end = run.spill.find(b"\n", 1)
    if line_end < 0:
        return b""
    run.end = len(run.data)
    run.exited = read_frame(bytes(run.spill[1:line_end]), prefix) or {}
    return bytes(run.spill[line_end + 1 :])


def _clipped(arrivals: Sequence[Arrival], end: int) -> tuple[Arrival, ...]:
    """The arrival notes of the first `end` bytes."""
    out: list[Arrival] = []
    for total, at in arrivals:
        out.append((min(total, end), at))
        if total >= end:
            break
    return tuple(out)
