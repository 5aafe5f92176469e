"""`replicate gen`: repository -> environment -> targets -> inputs -> golden -> validated tasks."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from replicate.batch.manifest import write_manifest
from replicate.batch.schemas import write_schemas
from replicate.batch.store import write_repo, write_task
from replicate.core.progress import NullProgress, Progress
from replicate.core.records import Funnel, Target
from replicate.errors import ReplicateError
from replicate.gen.audit import audit_leaks, visible_roots
from replicate.gen.funnel import FunnelCounter
from replicate.gen.harvest import HarvestResult, run_harvest
from replicate.gen.mint import Dropped, Minted, mint_target
from replicate.gen.prepare import PreparedRepo, prepare_repo
from replicate.gen.strength import DEFAULT_MIN_KILL_RATE
from replicate.harness.sandbox import get_sandbox
from replicate.harness.sandbox.base import Sandbox

PYTEST_FALLBACKS = ("pytest<9", "pytest<8", "pytest<7")
T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class GenOptions:
    repo: str
    out: Path
    commit: str | None = None
    limit: int | None = None
    sandbox: str = "local"
    workers: int = 2
    replace: bool = False
    harvest_timeout_s: float = 900.0
    # None: no strength check (the kill rate is not recorded); 0 records it and drops nothing
    min_kill_rate: float | None = DEFAULT_MIN_KILL_RATE
    cold: bool = False  # without the speed-ups (see RepoContext.speedups), to measure them


@dataclass(frozen=True)
class GenReport:
    funnel: Funnel
    task_ids: tuple[str, ...]
    out: Path


def mint(options: GenOptions, progress: Progress | None = None) -> GenReport:
    started = time.monotonic()
    show = progress or NullProgress()
    sandbox = get_sandbox(options.sandbox)
    out = options.out.resolve()
    prepared = prepare_repo(options.repo, options.commit, out, options.replace, show)
    counter = FunnelCounter()
    targets = {t.symbol: t for t in prepared.extraction.targets}
    counter.keep("extracted", len(targets))
    harvest, prepared = _harvest(prepared, targets, sandbox, options, show)
    prepared = prepared.with_extra_paths(harvest.extra_paths)
    if options.cold:  # without the speed-ups, to measure against (bench/gen_speed.py)
        prepared = replace(prepared, context=replace(prepared.context, speedups=False))
    write_repo(out, prepared.repo_dir, prepared.snapshot.record)
    traced = _traced(targets, harvest, counter)
    minted = _mint_all(prepared, traced, harvest, sandbox, options, counter, show)
    minted = _audit(prepared, minted, counter, show)
    ids = _write(out, prepared, minted)
    notes = (*prepared.notes, *harvest.notes, *_harvest_notes(harvest))
    funnel = counter.freeze(
        prepared.snapshot.record.key,
        prepared.snapshot.record.commit,
        prepared.extraction.skipped_files,
        time.monotonic() - started,
        notes,
    )
    return GenReport(funnel=funnel, task_ids=ids, out=out)


def _harvest(
    prepared: PreparedRepo,
    targets: Mapping[str, Target],
    sandbox: Sandbox,
    options: GenOptions,
    show: Progress,
) -> tuple[HarvestResult, PreparedRepo]:
    """Run the tests; if the newest pytest cannot even load their configuration, try older ones."""
    show.stage("running the repository's tests to harvest inputs")
    harvest = run_harvest(prepared.context, targets, sandbox, timeout_s=options.harvest_timeout_s)
    for constraint in PYTEST_FALLBACKS:
        if harvest.configured:
            break
        try:
            older = prepared.with_constraint(constraint)
        except ReplicateError:
            break
        show.stage(f"running the tests again under {constraint}")
        retry = run_harvest(older.context, targets, sandbox, timeout_s=options.harvest_timeout_s)
        if retry.configured or not harvest.configured:
            harvest, prepared = retry, older
    return harvest, prepared


def _harvest_notes(harvest: HarvestResult) -> tuple[str, ...]:
    if not harvest.configured:
        return (f"the repository's tests did not start: {harvest.log_tail[-300:]}",)
    if harvest.timed_out:
        return ("the test run hit its time limit; inputs recorded until then are used",)
    if harvest.exit_code not in (0, 1):
        return (f"pytest exited with code {harvest.exit_code}: {harvest.log_tail[-300:]}",)
    return ()


def _traced(
    targets: Mapping[str, Target], harvest: HarvestResult, counter: FunnelCounter
) -> list[Target]:
    traced = []
    for symbol, target in sorted(targets.items()):
        if harvest.calls.get(symbol):
            traced.append(target)
            counter.keep("traced")
        elif symbol in harvest.not_wrapped:
            counter.drop("traced", harvest.not_wrapped[symbol])
        elif harvest.drops.get(symbol):
            counter.drop("traced", harvest.drops[symbol].most_common(1)[0][0])
        else:
            counter.drop("traced", "not called by the tests")
    return traced


def _mint_all(
    prepared: PreparedRepo,
    traced: list[Target],
    harvest: HarvestResult,
    sandbox: Sandbox,
    options: GenOptions,
    counter: FunnelCounter,
    show: Progress,
) -> list[Minted]:
    show.stage("computing golden outputs and validating tasks", total=len(traced))
    minted: list[Minted] = []
    with ThreadPoolExecutor(max_workers=max(1, options.workers)) as pool:
        results = _in_order(
            pool,
            lambda t: _mint_one(prepared, t, harvest, sandbox, options),
            traced,
            max(1, options.workers) * 2,
        )
        with closing(results):  # at --limit: the targets not started yet are cancelled
            for n, result in enumerate(results):
                if options.limit is not None and len(minted) >= options.limit:
                    counter.drop("encodable", "not processed (--limit reached)", len(traced) - n)
                    break
                show.advance()
                _tally(result, counter, minted)
    return minted


def _in_order(
    pool: ThreadPoolExecutor, work: Callable[[T], R], items: Sequence[T], running: int
) -> Generator[R, None, None]:
    """`work` of each item, in the items' order, with up to `running` items at work at once:
    a slow item holds back the results after it, never the work on them."""
    futures: list[Future[R]] = []
    busy: set[Future[R]] = set()  # submitted and not seen done by `wait` yet
    queue = iter(items)
    taken = 0
    try:
        while taken < len(items):
            while len(busy) < running and len(futures) < len(items):
                futures.append(pool.submit(work, next(queue)))
                busy.add(futures[-1])
            while taken < len(futures) and futures[taken].done():
                taken += 1
                yield futures[taken - 1].result()
            if taken < len(items):
                busy = wait(busy, return_when=FIRST_COMPLETED).not_done
    finally:
        for future in futures[taken:]:
            future.cancel()


def _mint_one(
    prepared: PreparedRepo,
    target: Target,
    harvest: HarvestResult,
    sandbox: Sandbox,
    options: GenOptions,
) -> Minted | Dropped:
    return mint_target(
        prepared.context,
        prepared.snapshot,
        prepared.repo_dir,
        target,
        harvest.calls[target.symbol],
        sandbox,
        min_kill_rate=options.min_kill_rate,
        ctors=class_calls(harvest, target),
    )


CTORS_PER_CLASS = 8  # recorded class calls of a method's class that build other `self`s


def class_calls(harvest: HarvestResult, target: Target) -> tuple[str, ...]:
    """Distinct recorded class calls of a method target's class (first seen first, over the
    class's method targets in symbol order), at most `CTORS_PER_CLASS`."""
    if target.kind != "method" or not target.class_name:
        return ()
    prefix = f"{target.module}.{target.class_name}."
    found: dict[str, None] = {}
    for symbol in sorted(harvest.calls):
        if not symbol.startswith(prefix) or "." in symbol[len(prefix) :]:
            continue
        for call in harvest.calls[symbol]:
            if call.ctor_b64:
                found.setdefault(call.ctor_b64)
            if len(found) >= CTORS_PER_CLASS:
                return tuple(found)
    return tuple(found)


def _audit(
    prepared: PreparedRepo, minted: list[Minted], counter: FunnelCounter, show: Progress
) -> list[Minted]:
    """Reject tasks whose reference body the agent could find elsewhere (docs/design.md §4)."""
    show.stage("auditing for copies of the references the agent could see")
    roots = visible_roots(prepared.snapshot.tree, prepared.context.site_packages)
    cache = prepared.context.cache if prepared.context.speedups else None
    leaked = audit_leaks([m.task for m in minted], roots, cache)
    for leak in leaked.values():
        counter.revoke("validated", f"reference body visible to the agent in {leak.what}")
    return [m for m in minted if m.task.id not in leaked]


def _tally(result: Minted | Dropped, counter: FunnelCounter, minted: list[Minted]) -> None:
    stages = ("encodable", "deterministic", "validated")
    if isinstance(result, Dropped):
        for stage in stages[: stages.index(result.stage)]:
            counter.keep(stage)
        counter.drop(result.stage, result.reason)
        return
    for stage in stages:
        counter.keep(stage)
    minted.append(result)


def _write(out: Path, prepared: PreparedRepo, minted: list[Minted]) -> tuple[str, ...]:
    ids = []
    for item in minted:
        task = item.task
        write_task(out, task.spec, task.hidden, task.prompt, task.inputs, task.expected)
        ids.append(task.id)
    write_schemas(out)
    write_manifest(out)  # last: it covers every file of the batch, older tasks included
    return tuple(ids)


__all__ = ["GenOptions", "GenReport", "mint"]
