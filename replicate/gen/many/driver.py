"""`replicate gen --repos FILE --out DIR`: every source of FILE minted into the batch DIR.

The driver pins each source (a source that cannot be acquired fails at set-up), skips those the
ledger says are minted at the same commit and grader version, hands the rest to an executor as
`RepoJob`s, and as each job finishes moves its tasks into the batch and writes its ledger line;
one repository's failure is recorded and never stops the others. Last, the batch card."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from replicate.batch import SPECS, write_difficulty
from replicate.cache import file_lock
from replicate.core import NullProgress, Progress, TaskKind, name_problem, slug
from replicate.errors import ReplicateError
from replicate.executors import Executor
from replicate.gen.many.card import BatchCard, build_card, write_card
from replicate.gen.many.job import JobResult, RepoJob, mint_repo, unpack
from replicate.gen.many.ledger import RepoOutcome, append_ledger, read_ledger
from replicate.gen.many.merge import forget_repo, merge_repo, prune_repo
from replicate.gen.many.pin import Pinned, pin_source
from replicate.gen.many.placing import Placed, Refused, place
from replicate.gen.many.sources import Source, read_sources
from replicate.gen.pipeline import DEFAULT_KINDS
from replicate.gen.strength import DEFAULT_MIN_KILL_RATE

STAGING = ".staging"
LOCK = ".repos.lock"


@dataclass(frozen=True)
class ManyOptions:
    repos_file: Path
    out: Path
    limit: int | None = None  # per repository
    sandbox: str = "local"
    workers: int = 2  # per repository
    min_kill_rate: float | None = DEFAULT_MIN_KILL_RATE
    repo_budget_s: float | None = None
    replace: bool = False  # one commit per repository: a later line's replaces an earlier's
    kinds: frozenset[TaskKind] = DEFAULT_KINDS  # the task kinds to mint in every repository


@dataclass(frozen=True)
class ManyReport:
    card: BatchCard
    skipped: tuple[str, ...]  # sources already minted at their commit: not minted again
    out: Path


def mint_many(
    options: ManyOptions, executor: Executor, progress: Progress | None = None
) -> ManyReport:
    show = progress or NullProgress()
    sources = read_sources(options.repos_file)
    out = options.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    with file_lock(out / LOCK):
        plan = _plan(sources, out, options, show)
        jobs, skipped = plan.jobs, plan.skipped
        show.stage(f"minting {len(jobs)} repositories ({len(skipped)} already minted)", len(jobs))
        for result in executor.map(mint_repo, jobs):
            _take(out, result, plan.drops.get(result.outcome.source, ()))
            show.advance()
        latest = read_ledger(out)
        measured = write_difficulty(out).tasks
        bands = {ident: entry.difficulty.band for ident, entry in measured.items()}
        card = build_card([latest[s.text] for s in sources if s.text in latest], bands)
        write_card(out, card)
    return ManyReport(card=card, skipped=skipped, out=out)


@dataclass(frozen=True)
class _Plan:
    jobs: list[RepoJob]
    drops: dict[str, tuple[str, ...] | None]  # by source: the commits its minting replaces
    skipped: tuple[str, ...]


def _plan(sources: Sequence[Source], out: Path, options: ManyOptions, show: Progress) -> _Plan:
    """The jobs still to run, and the sources skipped; set-up failures go to the ledger.
    Each source is pinned in a child process within its budget (`pin`); the rest of the
    budget is its job's."""
    ledger = read_ledger(out)
    pinned: list[tuple[Source, Pinned]] = []
    for source in sources:
        show.stage(f"acquiring {source.text}")
        try:
            pinned.append((source, pin_source(source.spec, source.commit, options.repo_budget_s)))
        except ReplicateError as exc:
            _refuse(out, Refused(source, str(exc)))
    jobs: list[RepoJob] = []
    drops: dict[str, tuple[str, ...] | None] = {}
    skipped: list[str] = []
    for placed in place(pinned, ledger, options.replace):
        if isinstance(placed, Refused):
            _refuse(out, placed)
            continue
        previous = ledger.get(placed.source.text)
        pin = placed.pinned
        kinds = tuple(sorted(options.kinds))
        if previous and previous.done_at(placed.key, pin.commit, kinds) and _present(out, previous):
            skipped.append(placed.source.text)
            if placed.drop is None:  # --replace: the batch keeps this commit alone
                prune_repo(out, placed.key, pin.commit)
            continue
        if previous is not None:
            _forget_renamed(out, previous, placed.key)
        jobs.append(_job(placed, options))
        drops[placed.source.text] = placed.drop
    return _Plan(jobs, drops, tuple(skipped))


def _forget_renamed(out: Path, previous: RepoOutcome, key: str) -> None:
    """A source minted before under another key (by a gen that named it otherwise): that
    minting out of the batch, as this one will replace it."""
    old = previous.key
    if previous.status == "minted" and old is not None and old != key and previous.commit:
        forget_repo(out, old, (previous.commit,))


def _refuse(out: Path, refused: Refused) -> None:
    failed = RepoOutcome(
        source=refused.source.text, status="failed", stage="set-up", reason=refused.reason
    )
    append_ledger(out, [failed])


def _job(placed: Placed, options: ManyOptions) -> RepoJob:
    budget = options.repo_budget_s
    return RepoJob(
        source=placed.source.text,
        spec=placed.source.spec,
        commit=placed.pinned.commit,
        key=placed.key,
        origin=placed.pinned.origin,
        limit=options.limit,
        sandbox=options.sandbox,
        workers=options.workers,
        min_kill_rate=options.min_kill_rate,
        budget_s=None if budget is None else max(budget - placed.pinned.seconds, 0.1),
        kinds=tuple(sorted(options.kinds)),
    )


def _present(out: Path, outcome: RepoOutcome) -> bool:
    """Every task the ledger line lists is in the batch (an id that is no plain name never)."""
    return all(
        not name_problem(ident) and (out / SPECS / ident / "task.json").is_file()
        for ident in outcome.tasks
    )


def _take(out: Path, result: JobResult, drop: tuple[str, ...] | None) -> None:
    """Move a finished repository's tasks into the batch, then record it in the ledger."""
    outcome = result.outcome
    if outcome.status == "minted" and outcome.key is not None:
        staged = out / STAGING / slug(outcome.key)
        shutil.rmtree(staged, ignore_errors=True)
        unpack(result.archive, staged)
        merge_repo(out, staged, outcome.key, drop)
        shutil.rmtree(staged, ignore_errors=True)
    append_ledger(out, [outcome])
