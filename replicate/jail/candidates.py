"""Candidates' runs as forked children of sealed sessions: a grade without a jail start.

Starting a jail (bubblewrap, its cgroup, the interpreter, the runner's imports) costs ~50 ms of
CPU; calling a typical target on its hidden inputs costs a few ms, and a candidate that earns
anything is run twice.  A reward server or a trainer's reward function grades thousands of
candidates of the same few target files, so they run the way gen runs its own programs: as
children forked from one runner per target file, hash seed and memory limit
(`replicate.jail.session`), here in sessions *sealed* against their children:

- the requests pipe has no name in the jail (its read end is inherited, and each child closes
  it), and the runner makes itself non-dumpable: a child cannot open the pipe to read or inject
  requests, nor read the session's memory or descriptors through /proc, nor trace it; a runner
  that cannot do that exits, and every run of that interpreter goes to a jail of its own;
- the target's file is bound read-only, and the host writes each candidate into it between
  runs (a child cannot write the host's disk through it);
- one request at a time: the next candidate's job (its nonce, its inputs) reaches the runner
  only after the host has the previous run's ``exited`` frame, so no child holds another's;
- that frame is written under the run's own nonce, which no other child ever had; a child that
  forges its own ends only its own run early (what it writes after, and the runner's real
  frame, carry no nonce of the next run's: the next run ignores them);
- after each child the runner kills every other process of the jail until none is left, and
  empties /tmp and /dev/shm, before it writes that ``exited`` frame (and so before the host
  writes the next candidate in);
- the determinism check's second run (`again`) goes to a session of its own, another process
  with another memory layout, as a second jail would: a candidate whose answers follow `id()`
  is caught the same way.

A run a session cannot give (no session could be started, the session died: a candidate killed
it, say) comes back None, and `Jail.run` runs the candidate in a jail of its own: the verdict is
the same either way, only slower.  Local (bubblewrap) sandbox with the speed-ups only.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Hashable, Sequence

from replicate.core import CallInput, GradingSettings, Target
from replicate.errors import InfraError
from replicate.jail.calls import JailRun, RepoContext, RunPlan
from replicate.jail.series import forks_series
from replicate.jail.session import Session, unsealed
from replicate.sandbox import Sandbox, WarmStart

SESSION_MB = 16  # what an idle session holds: bubblewrap, its init and the runner (~12-15 MB)
IDLE_CEILING = 64  # its host descriptors and processes stay far from the usual limits
IDLE_SHARE = 16  # idle sessions take at most this fraction of the memory available


def idle_sessions(floor: int = 8, available_mb: int | None = None) -> int:
    """How many sessions may wait idle: two per target file a batch's grades go to (the first
    run's and the second's), for as many files as a sixteenth of the memory available holds,
    between `floor` and `IDLE_CEILING`.  A trainer's batch of tasks spans many files in no
    order: with 8 (the old limit) a 160-grade batch over the sample library's 8 files started
    ~200 sessions and graded barely faster than a jail per candidate (`bench/grade_spread.py`)."""
    mb = available_memory_mb() if available_mb is None else available_mb
    return max(floor, min(IDLE_CEILING, mb // IDLE_SHARE // SESSION_MB))


def available_memory_mb() -> int:
    """MemAvailable of /proc/meminfo; the free pages where it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // (1 << 20)
    except (OSError, ValueError):
        return 0


class CandidateSessions:
    """Idle sealed sessions by (repository, target file, hash seed, memory limit, first or
    second run); a run takes one (or starts one), and gives it back once its run is read.  At
    most `max_idle` wait between runs: the least recently used beyond that are ended.

    A session `prepare` starts (or finds idle) is kept for its `owner` (the attempt's `Jail`)
    while the owner lives: two attempts at tasks of one file, prepared one after the other and
    graded at once, each find their own session ready instead of one starting a jail while
    its grade waits."""

    def __init__(self, sandbox: Sandbox, max_idle: int = 8) -> None:
        self._sandbox = sandbox
        self._max_idle = max_idle
        self._lock = threading.Lock()
        self._idle: list[tuple[Hashable, Session]] = []  # least recently used first
        self._kept: dict[Session, weakref.ref[object]] = {}  # idle ones `prepare` keeps
        self._refused: set[str] = set()  # interpreters whose runner cannot seal a session
        self._closed = False
        self.started = 0  # sessions started, for tests and benches
        self.served = 0  # runs they gave

    def run(
        self,
        ctx: RepoContext,
        target: Target,
        inputs: Sequence[CallInput],
        settings: GradingSettings,
        program: bytes,
        *,
        hash_seed: int = 0,
        again: bool = False,
        owner: object | None = None,
    ) -> JailRun | None:
        """`program` (the spliced target file) run on `inputs` in a session's child; None when
        no session can give it (the caller runs it in a jail of its own)."""
        sandbox = self._sandbox
        if not isinstance(sandbox, WarmStart) or not self.serves(ctx):
            return None
        key = _key(ctx, target, settings, hash_seed, again)
        session = self._take(sandbox, key, RunPlan(ctx, target, settings, hash_seed, 0), owner)
        if session is None:
            return None
        found = session.run_all(inputs, settings, [program], target=target)[0]
        if found is None:  # the session is closed
            if unsealed(session):
                with self._lock:
                    self._refused.add(str(ctx.python))
            return None
        self._give(key, session)
        with self._lock:
            self.served += 1
        return found

    def prepare(
        self,
        ctx: RepoContext,
        target: Target,
        settings: GradingSettings,
        *,
        hash_seed: int = 0,
        owner: object | None = None,
        by_value: bool = False,
    ) -> None:
        """Start the sessions a later grade of `target` takes (its first run's and its second's)
        where none waits idle, so they get ready while the caller does something else (`run`:
        while the agent works); a grade then starts no jail.  `by_value`: the grade's inputs
        need the by-value module, loaded as the sessions start.  Best effort: a session that
        cannot start is simply not there."""
        sandbox = self._sandbox
        if not isinstance(sandbox, WarmStart) or not self.serves(ctx):
            return
        plan = RunPlan(ctx, target, settings, hash_seed, 0)
        for again in (False, True):
            key = _key(ctx, target, settings, hash_seed, again)
            with self._lock:
                if self._closed:
                    return
                ours = [s for held, s in self._idle if held == key]
                if any(self._holder(s) is owner for s in ours if owner is not None):
                    continue  # this owner's, ready
                free = [s for s in ours if self._holder(s) is None]
                if free:
                    self._keep(free[0], owner)
                    continue
            session = self._start(sandbox, plan, by_value)
            if session is None:
                return
            with self._lock:
                self._keep(session, owner)
            self._give(key, session)

    def serves(self, ctx: RepoContext) -> bool:
        """Whether candidates' runs in `ctx` go to sessions (else to jails of their own)."""
        if not forks_series(self._sandbox, ctx):
            return False
        with self._lock:
            return str(ctx.python) not in self._refused

    def _take(
        self, sandbox: WarmStart, key: Hashable, plan: RunPlan, owner: object | None
    ) -> Session | None:
        with self._lock:
            if self._closed:
                return None
            ours = [at for at, (held, _) in enumerate(self._idle) if held == key]
            holders = {at: self._holder(self._idle[at][1]) for at in ours}
            mine = [at for at in ours if owner is not None and holders[at] is owner]
            free = [at for at in ours if holders[at] is None]
            for at in mine[:1] or free[:1]:
                session = self._idle.pop(at)[1]
                self._kept.pop(session, None)
                return session
        return self._start(sandbox, plan)

    def _holder(self, session: Session) -> object | None:
        """Whom an idle session is kept for: None when nobody (or one now gone)."""
        kept = self._kept.get(session)
        return kept() if kept is not None else None

    def _keep(self, session: Session, owner: object | None) -> None:
        if owner is not None:
            self._kept[session] = weakref.ref(owner)

    def _start(self, sandbox: WarmStart, plan: RunPlan, by_value: bool = False) -> Session | None:
        """A new sealed session (counted in `started`), or None when none can start."""
        with self._lock:
            self.started += 1
        try:
            return Session(sandbox, plan, candidates=True, by_value=by_value)
        except InfraError:
            return None

    def _give(self, key: Hashable, session: Session) -> None:
        with self._lock:
            if self._closed:
                ended = [session]
            else:
                self._idle.append((key, session))
                cut = max(0, len(self._idle) - self._max_idle)
                ended = [held for _, held in self._idle[:cut]]
                del self._idle[:cut]
                for old in ended:
                    self._kept.pop(old, None)
        for old in ended:
            old.close()

    def close(self) -> None:
        """End every idle session (a run still out ends its session when it comes back)."""
        with self._lock:
            self._closed = True
            ended = [session for _, session in self._idle]
            self._idle.clear()
            self._kept.clear()
        for session in ended:
            session.close()

    def __enter__(self) -> CandidateSessions:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _key(
    ctx: RepoContext, target: Target, settings: GradingSettings, hash_seed: int, again: bool
) -> Hashable:
    """Which sessions can run a candidate: one repository, interpreter, target file, hash seed
    and memory limit, and the first run's apart from the second's."""
    return (str(ctx.tree), str(ctx.python), target.path, hash_seed, settings.memory_mb, again)
