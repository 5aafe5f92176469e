"""Where gen runs its own programs in sessions (`replicate.jail.session`): per target, and in
series for its mutants.

`FileSessions`: a target's runs at gen time (the reference under each hash seed and clock, its
re-grade, the degenerate programs, the searches) go to one session per target file, hash seed,
clock and memory limit, started on first use and lent with the file's other sessions to one
target at a time (`WorkerSessions`), so the next target of the same file, whichever worker mints
it, runs in them too; a few files' sessions wait unused at most, and all end with the gen.
`run_series`: the mutants of a target are graded together, on the same inputs: they are sent at
once, cut into as many runs of consecutive mutants as there are workers, each in a session (the
first in the target's own session of hash seed 0, the others in sessions of their own), so two
workers grade two mutants at a time as two warm jails would.  What a session cannot give comes
back as None: the caller runs it in a jail of its own.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

from replicate.core import CallInput, GradingSettings, Target
from replicate.errors import InfraError
from replicate.executors import map_in_order
from replicate.jail.calls import JailRun, RepoContext, RunPlan, Until
from replicate.jail.session import Session
from replicate.sandbox import Sandbox, WarmStart


def forks_series(sandbox: Sandbox, ctx: RepoContext) -> bool:
    """Whether programs of ours run in sessions in `sandbox` (bubblewrap, with the speed-ups)."""
    local = sandbox.isolated and getattr(sandbox, "name", "") == "local"
    return local and isinstance(sandbox, WarmStart) and ctx.speedups


def run_series(
    ctx: RepoContext,
    target: Target,
    inputs: Sequence[CallInput],
    sandbox: WarmStart,
    settings: GradingSettings,
    programs: Sequence[bytes],
    *,
    workers: int = 1,
    until_timeout: bool = False,
    until: Until | None = None,
    first: Session | None = None,
) -> list[JailRun | None]:
    """Each program's run on `inputs` (its bytes replace the target's file), in `workers`
    sessions at once; the runs in the programs' order.  With `until_timeout`, a program's run
    ends at its first timeout (a mutant that loops is killed by then: one call's limit); with
    `until`, at the first result frame it holds for (a mutant's first wrong answer, say).
    `first`: a session of the target's already started (hash seed 0, clock as it is), which
    takes the first part instead of a session of its own."""

    def one(numbered: tuple[int, Sequence[bytes]]) -> list[JailRun | None]:
        n, part = numbered
        if n == 0 and first is not None:
            return first.run_all(
                inputs, settings, part, until=until, until_timeout=until_timeout, target=target
            )
        with Session(sandbox, RunPlan(ctx, target, settings, 0, 0)) as session:
            return session.run_all(inputs, settings, part, until=until, until_timeout=until_timeout)

    parts = [[programs[k] for k in part] for part in _cut(len(programs), workers)]
    if len(parts) <= 1:
        return one((0, programs)) if programs else []
    with ThreadPoolExecutor(max_workers=len(parts), thread_name_prefix="replicate-series") as pool:
        return [run for runs in map_in_order(pool, one, list(enumerate(parts))) for run in runs]


def _cut(count: int, workers: int) -> list[range]:
    """`count` programs in at most `workers` runs of consecutive ones, of near-equal sizes."""
    ways = max(1, min(workers, count))
    bounds = [count * n // ways for n in range(ways + 1)]
    return [range(a, b) for a, b in itertools.pairwise(bounds) if b > a]


class FileSessions:
    """One gen worker's sessions, by target file, hash seed, clock and memory limit, kept from
    one target to the next of the same file (`begin` ends those of other files); a key whose
    session died runs in jails of its own until the next target (a program that kills its
    session would otherwise cost a session per run)."""

    def __init__(self, sandbox: WarmStart, ctx: RepoContext) -> None:
        self.sandbox, self.ctx = sandbox, ctx
        self.sessions: dict[tuple[object, ...], Session | None] = {}
        self.lock = threading.Lock()
        self.closed = False

    def begin(self, target: Target) -> None:
        """A new target: sessions of other files end, keys whose session died are tried anew."""
        with self.lock:
            ending = [s for k, s in self.sessions.items() if s is not None and k[0] != target.path]
            self.sessions = {
                k: s for k, s in self.sessions.items() if s is not None and k[0] == target.path
            }
        for session in ending:
            session.close()

    def run(
        self,
        target: Target,
        inputs: Sequence[CallInput],
        settings: GradingSettings,
        override: bytes | None,
        *,
        hash_seed: int,
        clock_shift_days: int,
        encode_inputs: bool,
        until: Until | None,
    ) -> JailRun | None:
        """The run `run_calls` would give, from a session of the target's file; None to run it
        alone."""
        plan = RunPlan(self.ctx, target, settings, hash_seed, clock_shift_days)
        session = self._session(plan)
        if session is None:
            return None
        program = override if override is not None else (self.ctx.tree / target.path).read_bytes()
        got = session.run_all(
            inputs, settings, [program], encode_inputs=encode_inputs, until=until, target=target
        )
        if got[0] is None:  # the session is closed
            with self.lock:
                self.sessions[self._key(plan)] = None
        return got[0]

    def seed_zero(self, target: Target, settings: GradingSettings) -> Session | None:
        """The session of hash seed 0 of the target's file, for the first part of its mutants'
        series (one jail fewer per target than a session per part)."""
        return self._session(RunPlan(self.ctx, target, settings, 0, 0))

    @staticmethod
    def _key(plan: RunPlan) -> tuple[object, ...]:
        shape = (plan.target.path, plan.settings.memory_mb)
        return (*shape, plan.hash_seed, plan.clock_shift_days)

    def _session(self, plan: RunPlan) -> Session | None:
        key = self._key(plan)
        with self.lock:
            if self.closed:
                return None
            if key not in self.sessions:
                try:
                    self.sessions[key] = Session(self.sandbox, plan)
                except InfraError:
                    self.sessions[key] = None
            found = self.sessions[key]
            if found is not None and found.closed:  # closed by a run that came back None
                self.sessions[key] = found = None
            return found

    def close(self) -> None:
        """End every session (their jails exit) and remove their files."""
        with self.lock:
            self.closed = True
            found = [s for s in self.sessions.values() if s is not None]
            self.sessions.clear()
        for session in found:
            session.close()

    def __enter__(self) -> FileSessions:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class WorkerSessions:
    """Gen's `FileSessions`, shared by its worker threads: a target borrows its file's sessions
    (`lend`), from a target of the same file finished before it where there is one, and gives
    them back for the next; at most `idle` sets wait unused (the longest unused are ended), and
    `close` ends them all (at the end of the gen).  Gen hands its workers the targets of a few
    files at a time, one file after another (`replicate.gen.pipeline`), so a file's sessions
    serve its targets one after another whichever worker mints them."""

    def __init__(self, sandbox: WarmStart, ctx: RepoContext, idle: int = 8) -> None:
        self.sandbox, self.ctx, self.idle_limit = sandbox, ctx, max(1, idle)
        self.idle: list[tuple[str, FileSessions]] = []  # the most recently given back last
        self.made: list[FileSessions] = []
        self.lock = threading.Lock()
        self.closed = False

    @contextlib.contextmanager
    def lend(self, target: Target) -> Iterator[FileSessions]:
        """Sessions of `target`'s file for the time of the block."""
        sessions = self._take(target)
        try:
            yield sessions
        finally:
            self._give(target.path, sessions)

    def _take(self, target: Target) -> FileSessions:
        with self.lock:
            same = [n for n, (path, _) in enumerate(self.idle) if path == target.path]
            if same:  # the one given back last
                sessions = self.idle.pop(same[-1])[1]
            else:
                sessions = FileSessions(self.sandbox, self.ctx)
                self.made.append(sessions)
        sessions.begin(target)
        return sessions

    def _give(self, path: str, sessions: FileSessions) -> None:
        with self.lock:
            ended: list[FileSessions] = [sessions] if self.closed else []
            if not self.closed:
                self.idle.append((path, sessions))
                ended = [s for _, s in self.idle[: -self.idle_limit]]
                self.idle = self.idle[-self.idle_limit :]
            self.made = [s for s in self.made if s not in ended]
        for gone in ended:
            gone.close()

    def close(self) -> None:
        with self.lock:
            self.closed = True
            made, self.made, self.idle = self.made, [], []
        for sessions in made:
            sessions.close()

    def __enter__(self) -> WorkerSessions:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
