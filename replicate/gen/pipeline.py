"""`replicate gen`: repository -> environment -> targets -> inputs -> golden -> validated tasks."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from replicate import GRADER_VERSION
from replicate.batch import minting, write_difficulty, write_manifest, write_repo, write_schemas
from replicate.cache import cache_root
from replicate.core import (
    ClassRef,
    DropReason,
    Funnel,
    LedgerEntry,
    NullProgress,
    Progress,
    Target,
    TaskKind,
)
from replicate.errors import ReplicateError
from replicate.executors import first_done, in_lanes
from replicate.gen.audit import LeakAudit, visible_roots
from replicate.gen.classes import GEN_SEQUENCES, ClassWork, class_refs, mint_classes
from replicate.gen.funnel import STAGES, FunnelCounter
from replicate.gen.javascript import ScriptWork, mint_scripts
from replicate.gen.ledger import Ledger, LedgerKey, decided
from replicate.gen.modules import mint_modules
from replicate.gen.prepare import PreparedRepo, prepare_repo
from replicate.gen.publish import NotStarted, Publisher
from replicate.gen.strength import DEFAULT_MIN_KILL_RATE
from replicate.gen.target import Dropped, Minted, mint_target
from replicate.harvest import HarvestResult, harvest_detail, run_harvest
from replicate.jail import KNOWN_OUTCOMES, Jail, Sandbox, WorkerSessions, get_sandbox

PYTEST_FALLBACKS = ("pytest<9", "pytest<8", "pytest<7")
T = TypeVar("T")
R = TypeVar("R")


# What gen mints; a class task is assembled from its methods' tasks, a module task from its
# file's function and method tasks.
MINTED_KINDS = frozenset(TaskKind)  # gen can mint
# What gen mints unless `--kinds` says otherwise: module tasks are asked for (a module task
# of every file doubles the grading of its members at gen; call sequences do not grade them yet)
DEFAULT_KINDS = frozenset({TaskKind.FUNCTION, TaskKind.METHOD, TaskKind.CLASS})


def parse_kinds(text: str) -> frozenset[TaskKind]:
    """`--kinds function,method,class`: the kinds named, or a one-line ReplicateError."""
    try:
        kinds = TaskKind.parse(text)
    except ValueError as exc:
        raise ReplicateError(f"--kinds: {exc}") from None
    singles = {TaskKind.FUNCTION, TaskKind.METHOD}
    if TaskKind.MODULE in kinds and not singles <= kinds:
        raise ReplicateError(
            "--kinds: module needs function and method too (a module task is assembled from "
            "its file's function and method tasks)"
        )
    if TaskKind.CLASS in kinds and TaskKind.METHOD not in kinds:
        raise ReplicateError(
            "--kinds: class needs method too (a class task is assembled from its methods' tasks)"
        )
    return kinds


@dataclass(frozen=True)
class GenOptions:
    repo: str
    out: Path
    commit: str | None = None
    key: str | None = None  # the repository's key, when not the one it names itself (--repos)
    limit: int | None = None
    sandbox: str = "local"
    workers: int = 2
    replace: bool = False
    harvest_timeout_s: float = 900.0
    # None: no strength check (the kill rate is not recorded); 0 records it and drops nothing
    min_kill_rate: float | None = DEFAULT_MIN_KILL_RATE
    # stop starting targets this many seconds after gen started (the rest: a later run)
    budget_s: float | None = None
    fresh: bool = False  # mint every target again, whatever the batch's ledger says
    cold: bool = False  # without the speed-ups (see RepoContext.speedups), to measure them
    kinds: frozenset[TaskKind] = DEFAULT_KINDS  # the task kinds to mint (`parse_kinds`)


@dataclass(frozen=True)
class GenReport:
    funnel: Funnel
    task_ids: tuple[str, ...]
    out: Path
    resumed: int = 0  # targets an earlier run had decided (taken from the ledger, not redone)


def mint(options: GenOptions, progress: Progress | None = None) -> GenReport:
    started = time.monotonic()
    deadline = None if options.budget_s is None else started + options.budget_s
    show = progress or NullProgress()
    sandbox = get_sandbox(options.sandbox)
    out = options.out.resolve()
    prepared = _prepare(options, out, show)
    record = prepared.snapshot.record
    key = LedgerKey(record.key, record.commit, GRADER_VERSION, options.min_kill_rate)
    known = {} if options.fresh else decided(out, key)
    counter = FunnelCounter()
    extraction = prepared.extraction
    targets = {t.symbol: t for t in extraction.targets if t.task_kind in options.kinds}
    counter.keep(STAGES[0], len(targets))
    if prepared.language != "python":
        return _mint_scripts(prepared, targets, known, Ledger(out, key), counter, options, show)
    minting_classes = TaskKind.CLASS in options.kinds
    classes = class_refs(extraction.classes) if minting_classes else {}
    harvest, prepared = _harvest(prepared, targets, classes, sandbox, options, show)
    prepared = prepared.with_extra_paths(harvest.extra_paths)
    if options.cold:  # without the speed-ups, to measure against (bench/gen_speed.py)
        prepared = replace(prepared, context=replace(prepared.context, speedups=False))
    write_repo(out, prepared.repo_dir, prepared.snapshot.record)
    roots = visible_roots(prepared.snapshot.tree, prepared.context.site_packages)
    audit = LeakAudit(roots, None if options.cold else cache_root())
    publish = Publisher(out, Ledger(out, key), counter, audit, show)
    traced = _traced(targets, harvest, known, publish)
    # our own programs' runs; as many files' sessions kept unused as targets are at work
    sessions = Jail(prepared.context, sandbox).worker_sessions(_running(options))
    work = _Work(prepared, harvest, sandbox, options, known, deadline, sessions)
    with closing(audit), KNOWN_OUTCOMES.while_minting():
        try:
            not_started = _mint_all(work, traced, publish, show)
        finally:
            if sessions is not None:
                sessions.close()
        not_started += _mint_wholes(work, publish, show, not_started > 0)
    _write(out)
    notes = (*prepared.notes, *harvest.notes, *_harvest_notes(harvest))
    if not_started:
        notes = (*notes, f"stopped at the time budget: {not_started} targets not started")
    funnel = counter.freeze(
        record.key,
        record.commit,
        prepared.extraction.skipped_files,
        time.monotonic() - started,
        notes,
    )
    return GenReport(funnel, tuple(publish.task_ids), out, publish.resumed)


def _mint_scripts(
    prepared: PreparedRepo,
    targets: Mapping[str, Target],
    known: Mapping[str, LedgerEntry],
    ledger: Ledger,
    counter: FunnelCounter,
    options: GenOptions,
    show: Progress,
) -> GenReport:
    """A JavaScript/TypeScript repository's tasks (`gen/javascript.py`), published, counted
    and written as a Python repository's are."""
    started = time.monotonic()
    out, record = ledger.out, prepared.snapshot.record
    write_repo(out, prepared.repo_dir, record)
    roots = visible_roots(prepared.snapshot.tree, prepared.context.site_packages)
    audit = LeakAudit(roots, cache_root())
    publish = Publisher(out, ledger, counter, audit, show)
    work = ScriptWork(
        prepared.snapshot,
        prepared.repo_dir,
        prepared.language,
        prepared.test_runner,
        get_sandbox(options.sandbox),
        options.limit,
        options.min_kill_rate,
        warm=not options.cold,
    )
    with closing(audit):
        notes = (*prepared.notes, *mint_scripts(work, targets, known, publish, show))
    _write(out)
    skipped = prepared.extraction.skipped_files
    funnel = counter.freeze(record.key, record.commit, skipped, time.monotonic() - started, notes)
    return GenReport(funnel, tuple(publish.task_ids), out, publish.resumed)


def _mint_wholes(work: _Work, publish: Publisher, show: Progress, stopped: bool) -> int:
    """The class and module tasks asked for, from the function and method tasks of this gen;
    no class task when the time budget `stopped` it (their methods are not all decided: a later
    run mints them, as a module waits for its members); the number of classes left unstarted."""
    prepared, kinds = work.prepared, work.options.kinds
    extraction = prepared.extraction
    classes = extraction.classes if TaskKind.CLASS in kinds else []
    left = len(classes) if stopped else 0
    if left:
        publish.counter.keep("extracted", left)
        publish.skipped(DropReason.TIME_BUDGET_REACHED, left)
        classes = []
    jail = Jail(prepared.context, work.sandbox)
    at = ClassWork(publish.out, prepared.snapshot, prepared.repo_dir, jail, work.harvest.sequences)
    ids = tuple(publish.task_ids)
    if classes:
        show.stage("minting class tasks")
        mint_classes(classes, ids, work.known, publish, at, work.options.workers)
    if TaskKind.MODULE in kinds and extraction.modules:
        show.stage("minting module tasks")
        modules = extraction.modules
        singles = [t for t in extraction.targets if t.task_kind in kinds]
        mint_modules(modules, singles, work.known, publish, at, work.options.workers)
    return left


def _prepare(options: GenOptions, out: Path, show: Progress) -> PreparedRepo:
    """The repository brought into the batch, which is marked as being minted from here on
    (the mark is taken back when the repository is refused before the batch was touched)."""
    marked = minting.begin(out, options.repo)
    try:
        return prepare_repo(
            options.repo, options.commit, out, options.replace, show, key=options.key
        )
    except ReplicateError:
        if marked:
            minting.finish(out)
        raise


def _harvest(
    prepared: PreparedRepo,
    targets: Mapping[str, Target],
    classes: Mapping[str, ClassRef],
    sandbox: Sandbox,
    options: GenOptions,
    show: Progress,
) -> tuple[HarvestResult, PreparedRepo]:
    """Run the tests (recording `classes`' call sequences too); if the newest pytest cannot even
    load their configuration, try older ones."""
    show.stage("running the repository's tests to harvest inputs")
    jail = Jail(prepared.context, sandbox)
    harvest = run_harvest(
        jail, targets, timeout_s=options.harvest_timeout_s, classes=classes,
        sequence_budget=GEN_SEQUENCES,
    )  # fmt: skip
    for constraint in PYTEST_FALLBACKS:
        if harvest.configured:
            break
        try:
            older = prepared.with_constraint(constraint)
        except ReplicateError:
            break
        show.stage(f"running the tests again under {constraint}")
        retry = run_harvest(
            Jail(older.context, sandbox), targets, timeout_s=options.harvest_timeout_s,
            classes=classes, sequence_budget=GEN_SEQUENCES,
        )  # fmt: skip
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
    targets: Mapping[str, Target],
    harvest: HarvestResult,
    known: Mapping[str, LedgerEntry],
    publish: Publisher,
) -> list[Target]:
    """The targets to mint (those the tests called, and those an earlier run got past this
    stage); the others are dropped here, or counted as the ledger says."""
    traced = []
    for symbol, target in sorted(targets.items()):
        entry = known.get(symbol)
        if entry is not None and entry.stage == STAGES[0]:
            publish.resume(entry)
        elif entry is not None or harvest.calls.get(symbol):
            traced.append(target)
        elif symbol in harvest.not_wrapped:  # "module does not import: <the error>"
            reason, _, why = harvest.not_wrapped[symbol].partition(": ")
            publish.dropped(symbol, STAGES[1], reason, why)
        elif harvest.drops.get(symbol):
            reason = harvest.drops[symbol].most_common(1)[0][0]
            publish.dropped(symbol, STAGES[1], reason, harvest_detail(harvest, symbol))
        else:
            publish.dropped(symbol, STAGES[1], *_not_called(harvest))
    return traced


# the drops whose detail is what the harvest saw
_TOO_FEW = (DropReason.TOO_FEW_TRACED, DropReason.TOO_FEW_DETERMINISTIC)


def _not_called(harvest: HarvestResult) -> tuple[DropReason, str]:
    """Why the tests did not call a target, and what more is known: they may not have run."""
    if not harvest.configured:
        return DropReason.TESTS_DID_NOT_START, harvest.log_tail[-200:]
    if harvest.timed_out:
        return DropReason.NOT_CALLED, "the test run hit its time limit before any call"
    return DropReason.NOT_CALLED, ""


@dataclass(frozen=True)
class _Work:
    """Minting one target, unless an earlier run decided it or the time budget is spent."""

    prepared: PreparedRepo
    harvest: HarvestResult
    sandbox: Sandbox
    options: GenOptions
    known: Mapping[str, LedgerEntry]
    deadline: float | None
    sessions: WorkerSessions | None  # jails per file, seed and clock, lent to each target

    def __call__(self, target: Target) -> Minted | Dropped | LedgerEntry | NotStarted:
        if target.symbol in self.known:
            return self.known[target.symbol]
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return NotStarted()
        jail = Jail(self.prepared.context, self.sandbox)
        if self.sessions is None:
            return _mint_one(self.prepared, target, self.harvest, jail, self.options)
        with self.sessions.lend(target) as sessions:
            jail = jail.in_sessions(sessions)
            return _mint_one(self.prepared, target, self.harvest, jail, self.options)


def _mint_all(work: _Work, traced: list[Target], publish: Publisher, show: Progress) -> int:
    """Mint the traced targets, each published as soon as it and those before it are done;
    the number the time budget left unstarted."""
    show.stage("computing golden outputs and validating tasks", total=len(traced))
    show.tasks(len(publish.task_ids))
    workers = max(1, work.options.workers)
    limit = work.options.limit
    not_started = 0
    running = _running(work.options)
    # With --limit the first targets in symbol order; else a few files at a time
    order = traced if limit is not None else in_lanes(traced, _file_of, running)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = _in_order(pool, work, order, running)
        with closing(results):  # at --limit: the targets not started yet are cancelled
            for n, (target, result) in enumerate(zip(order, results, strict=False)):
                if limit is not None and len(publish.task_ids) >= limit:
                    publish.skipped(DropReason.LIMIT_REACHED, len(traced) - n)
                    break
                show.advance()
                if isinstance(result, LedgerEntry):
                    publish.resume(result)
                elif isinstance(result, NotStarted):
                    not_started += 1
                else:
                    publish.outcome(target.symbol, result)
    publish.skipped(DropReason.TIME_BUDGET_REACHED, not_started)
    return not_started


def _running(options: GenOptions) -> int:
    """How many targets are at work at once: twice the workers (one waits on its jails while
    the other holds the interpreter lock)."""
    return 2 * max(1, options.workers)


def _file_of(target: Target) -> str:
    """A target's file: its sessions serve the file's next target (`WorkerSessions`)."""
    return target.path


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
                busy = first_done(busy)[1]
    finally:
        for future in futures[taken:]:
            future.cancel()


def _mint_one(
    prepared: PreparedRepo,
    target: Target,
    harvest: HarvestResult,
    jail: Jail,
    options: GenOptions,
) -> Minted | Dropped:
    result = mint_target(
        jail,
        prepared.snapshot,
        prepared.repo_dir,
        target,
        harvest.calls[target.symbol],
        min_kill_rate=options.min_kill_rate,
        ctors=harvest.class_calls(target),
    )
    if isinstance(result, Dropped) and DropReason.of(result.reason) in _TOO_FEW:
        seen = harvest_detail(harvest, target.symbol)
        return replace(result, detail="; ".join(d for d in (result.detail, seen) if d))
    return result


def _write(out: Path) -> None:
    """The tasks are on disk already: the schemas, then the manifest over every file of the
    batch (older tasks included), each task's difficulty, and the batch is no longer marked as
    being minted."""
    write_schemas(out)
    write_manifest(out)
    write_difficulty(out)
    minting.finish(out)


__all__ = ["DEFAULT_KINDS", "MINTED_KINDS", "GenOptions", "GenReport", "mint", "parse_kinds"]
