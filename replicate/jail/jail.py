"""A repository's code, ready to run in isolation: what every stage that runs code is handed.

Running a program on a target's inputs needs three things that travel together: the repository's
context (its pristine tree, import roots and environment: `RepoContext`), the sandbox backend,
and, where jails are started ahead of their job, the warm pool they come from. `Jail` holds the
three; `Jail.run` is `run_calls` with them filled in, `Jail.run_series` runs several programs of
our own in one jail (`series`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from replicate.core import CallInput, GradingSettings, Target
from replicate.errors import InfraError
from replicate.jail.by_value_module import needs_module
from replicate.jail.calls import JailRun, RepoContext, Until, prewarm, run_calls
from replicate.jail.candidates import CandidateSessions
from replicate.jail.series import FileSessions, WorkerSessions, forks_series, run_series
from replicate.jail.warm import WarmPool
from replicate.sandbox import Sandbox, WarmStart
from replicate.scratch import stopping


@dataclass(frozen=True)
class Jail:
    """One repository's context and sandbox, and the warm pool its candidates' jails come from
    (None: every run starts its own jail)."""

    ctx: RepoContext
    sandbox: Sandbox
    pool: WarmPool | None = None
    sessions: FileSessions | None = None  # gen's: our own programs' runs (series.py)
    candidates: CandidateSessions | None = None  # graders': candidates' runs (candidates.py)

    def run(
        self,
        target: Target,
        inputs: Sequence[CallInput],
        settings: GradingSettings,
        *,
        override: bytes | None = None,
        hash_seed: int = 0,
        encode_inputs: bool = False,
        clock_shift_days: int = 0,
        until: Until | None = None,
        again: bool = False,
    ) -> JailRun:
        """Call `target` on every input in a jail (`run_calls`); `override` replaces its file.
        With `sessions` (gen: never a candidate) the run is a child of the target's session;
        else a candidate's run (`override` given) is a child of a sealed session of
        `candidates` if any (`again`: the determinism check's second run, in another session),
        or takes a warm jail from the pool if any.  Once a SIGINT or SIGTERM is ending the
        process, an InfraError instead: in-flight work in other threads stops at its next run
        rather than starting jails the exit waits for."""
        if stopping():
            raise InfraError("interrupted")
        if self.sessions is not None:
            found = self.sessions.run(
                target,
                inputs,
                settings,
                override,
                hash_seed=hash_seed,
                clock_shift_days=clock_shift_days,
                encode_inputs=encode_inputs,
                until=until,
            )
            if found is not None:
                return found
            if stopping():  # the session died because the process is ending
                raise InfraError("interrupted")
        elif self.candidates is not None and override is not None and not clock_shift_days:
            plain = not encode_inputs and until is None  # what candidates' grades ask
            forked = plain and self.candidates.run(
                self.ctx,
                target,
                inputs,
                settings,
                override,
                hash_seed=hash_seed,
                again=again,
                owner=self,
            )
            if forked:
                return forked
            if stopping():
                raise InfraError("interrupted")
        return run_calls(
            self.ctx,
            target,
            inputs,
            self.sandbox,
            settings,
            override=override,
            hash_seed=hash_seed,
            encode_inputs=encode_inputs,
            clock_shift_days=clock_shift_days,
            pool=self.pool,
            until=until,
        )

    def run_series(
        self,
        target: Target,
        inputs: Sequence[CallInput],
        settings: GradingSettings,
        programs: Sequence[bytes],
        *,
        workers: int = 1,
        until_timeout: bool = False,
        until: Until | None = None,
    ) -> list[JailRun | None]:
        """Each of our own programs (mutants: never a candidate) run on `inputs` in a series,
        one jail per worker forking a child per program (`replicate.jail.series`); None for a
        program to run alone: all of them where the sandbox runs no series (not bubblewrap, or
        `--cold`).  `until_timeout`: a program's run ends at its first timeout; `until`: at
        the first result frame it holds for.  An
        InfraError once a signal is ending the process, as `run`."""
        if stopping():
            raise InfraError("interrupted")
        sandbox = self.sandbox
        if not forks_series(sandbox, self.ctx) or not isinstance(sandbox, WarmStart):
            return [None] * len(programs)
        first = self.sessions.seed_zero(target, settings) if self.sessions is not None else None
        return run_series(
            self.ctx,
            target,
            inputs,
            sandbox,
            settings,
            programs,
            workers=workers,
            until_timeout=until_timeout,
            until=until,
            first=first,
        )

    def prewarm(
        self,
        target: Target,
        inputs: Sequence[CallInput],
        settings: GradingSettings,
        *,
        hash_seed: int = 0,
    ) -> None:
        """Start what a later candidate run of `target` on `inputs` will take: the sessions,
        where candidates' runs go to sessions, else the pool's warm jails (nothing without
        either)."""
        if self.candidates is not None and self.candidates.serves(self.ctx):
            by_value = needs_module(item.pickle_b64 for item in inputs)
            self.candidates.prepare(
                self.ctx, target, settings, hash_seed=hash_seed, owner=self, by_value=by_value
            )
            return
        if self.pool is not None:
            prewarm(self.ctx, target, inputs, settings, self.pool, hash_seed=hash_seed)

    def cold(self) -> Jail:
        """The same repository and sandbox, every run in a jail of its own."""
        return dataclasses.replace(self, pool=None, sessions=None, candidates=None)

    def in_sessions(self, sessions: FileSessions | None) -> Jail:
        """The same repository and sandbox, our own programs' runs in `sessions`."""
        return dataclasses.replace(self, sessions=sessions)

    def worker_sessions(self, idle: int = 8) -> WorkerSessions | None:
        """Sessions for gen's runs of its own programs, lent to each target by its file (at
        most `idle` files' sessions kept unused), where the sandbox runs them (bubblewrap, with
        the speed-ups); the caller closes them."""
        sandbox = self.sandbox
        if not forks_series(sandbox, self.ctx) or not isinstance(sandbox, WarmStart):
            return None
        return WorkerSessions(sandbox, self.ctx, idle)

    def warm(self, pool: WarmPool | None) -> Jail:
        """The same repository and sandbox, candidates' runs taking jails from `pool`."""
        return dataclasses.replace(self, pool=pool)
