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

from replicate.acquire import acquire
from replicate.batch import SPECS, write_difficulty
from replicate.cache import cache_root, file_lock
from replicate.core import NullProgress, Progress, name_problem, slug
from replicate.errors import ReplicateError
from replicate.executors import Executor
from replicate.gen.many.card import BatchCard, build_card, write_card
from replicate.gen.many.job import JobResult, RepoJob, mint_repo, unpack
from replicate.gen.many.ledger import RepoOutcome, append_ledger, read_ledger
from replicate.gen.many.merge import merge_repo
from replicate.gen.many.sources import Source, read_sources
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
        jobs, skipped = _plan(sources, out, options, show)
        show.stage(f"minting {len(jobs)} repositories ({len(skipped)} already minted)", len(jobs))
        for result in executor.map(mint_repo, jobs):
            _take(out, result)
            show.advance()
        latest = read_ledger(out)
        measured = write_difficulty(out).tasks
        bands = {ident: entry.difficulty.band for ident, entry in measured.items()}
        card = build_card([latest[s.text] for s in sources if s.text in latest], bands)
        write_card(out, card)
    return ManyReport(card=card, skipped=skipped, out=out)


def _plan(
    sources: Sequence[Source], out: Path, options: ManyOptions, show: Progress
) -> tuple[list[RepoJob], tuple[str, ...]]:
    """The jobs still to run, and the sources skipped; set-up failures go to the ledger."""
    ledger = read_ledger(out)
    jobs: list[RepoJob] = []
    skipped: list[str] = []
    owners: dict[str, str] = {}  # repository key -> the source that claimed it
    for source in sources:
        show.stage(f"acquiring {source.text}")
        try:
            repo = acquire(source.spec, source.commit, cache_root())
            if repo.key in owners:
                raise ReplicateError(f"{repo.key} is already minted from {owners[repo.key]}")
        except ReplicateError as exc:
            failed = RepoOutcome(
                source=source.text, status="failed", stage="set-up", reason=str(exc)
            )
            append_ledger(out, [failed])
            continue
        owners[repo.key] = source.text
        previous = ledger.get(source.text)
        if previous and previous.done_at(repo.key, repo.commit) and _present(out, previous):
            skipped.append(source.text)
            continue
        jobs.append(_job(source, repo.key, repo.commit, options))
    return jobs, tuple(skipped)


def _job(source: Source, key: str, commit: str, options: ManyOptions) -> RepoJob:
    return RepoJob(
        source=source.text,
        spec=source.spec,
        commit=commit,
        key=key,
        limit=options.limit,
        sandbox=options.sandbox,
        workers=options.workers,
        min_kill_rate=options.min_kill_rate,
        budget_s=options.repo_budget_s,
    )


def _present(out: Path, outcome: RepoOutcome) -> bool:
    """Every task the ledger line lists is in the batch (an id that is no plain name never)."""
    return all(
        not name_problem(ident) and (out / SPECS / ident / "task.json").is_file()
        for ident in outcome.tasks
    )


def _take(out: Path, result: JobResult) -> None:
    """Move a finished repository's tasks into the batch, then record it in the ledger."""
    outcome = result.outcome
    if outcome.status == "minted" and outcome.key is not None:
        staged = out / STAGING / slug(outcome.key)
        shutil.rmtree(staged, ignore_errors=True)
        unpack(result.archive, staged)
        merge_repo(out, staged, outcome.key)
        shutil.rmtree(staged, ignore_errors=True)
    append_ledger(out, [outcome])
