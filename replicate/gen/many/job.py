"""One repository's job, wherever an executor runs it: mint into a scratch batch in a child
process (killed when the time budget runs out), then hand back the outcome and the scratch
batch packed as a tar archive (what moves between nodes)."""

from __future__ import annotations

import io
import os
import socket
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from replicate import scratch
from replicate.batch import HIDDEN, REPOS
from replicate.core import Funnel, HiddenTask, TaskKind, summed_reasons
from replicate.gen.many.child import ChildJob, ChildResult
from replicate.gen.many.ledger import RepoOutcome, Stage, Worker
from replicate.gen.many.licence import find_licence
from replicate.gen.many.process import crash_reason, run_child
from replicate.gen.pipeline import DEFAULT_KINDS

# The share of a repository's budget after which its gen starts no more targets, finishes those
# at work and writes them (the rest recorded as not started); the hard budget kills it after.
SOFT_SHARE = 0.7


@dataclass(frozen=True)
class RepoJob:
    source: str  # the line of the --repos file
    spec: str
    commit: str
    key: str
    origin: str
    limit: int | None
    sandbox: str
    workers: int
    min_kill_rate: float | None
    budget_s: float | None
    kinds: tuple[TaskKind, ...] = tuple(sorted(DEFAULT_KINDS))  # to mint (`gen --kinds`)


@dataclass(frozen=True)
class JobResult:
    outcome: RepoOutcome
    archive: bytes  # the repository's batch as an uncompressed tar; empty when it failed


def mint_repo(job: RepoJob) -> JobResult:
    started = time.monotonic()
    worker = Worker(host=socket.gethostname(), pid=os.getpid())
    with scratch.temporary_dir("replicate-many-") as tmp:
        out = Path(tmp) / "batch"
        result, stage, log_tail = _run_child(job, Path(tmp), out)
        seconds = round(time.monotonic() - started, 1)
        if result.error is not None or result.funnel is None:
            failed = RepoOutcome(
                source=job.source,
                status="failed",
                key=job.key,
                origin=job.origin,
                commit=job.commit,
                stage=stage,
                reason=result.error or "no report",
                seconds=seconds,
                worker=worker,
                log_tail=log_tail,
            )
            return JobResult(failed, b"")
        outcome = _minted(job, result.funnel, result.tasks, out, seconds, worker)
        return JobResult(outcome, pack(out))


def _run_child(job: RepoJob, tmp: Path, out: Path) -> tuple[ChildResult, Stage, str]:
    """The child's result, the stage a failure belongs to (`gen` or `budget`), and the end of
    its stderr when it crashed."""
    child = ChildJob(
        repo=job.spec,
        commit=job.commit,
        key=job.key,
        out=out,
        limit=job.limit,
        sandbox=job.sandbox,
        workers=job.workers,
        min_kill_rate=job.min_kill_rate,
        kinds=job.kinds,
        soft_budget_s=None if job.budget_s is None else job.budget_s * SOFT_SHARE,
    )
    ended = run_child("replicate.gen.many.child", child, tmp, job.budget_s)
    if ended.out_of_time:
        return ChildResult(error=f"out of time after {job.budget_s:g} s"), "budget", ""
    try:
        return ChildResult.model_validate_json(ended.report or ""), "gen", ""
    except ValidationError:
        crash = crash_reason(ended.code, ended.log_tail)
        return ChildResult(error=crash), "gen", ended.log_tail


def _minted(
    job: RepoJob,
    funnel: Funnel,
    tasks: tuple[str, ...],
    out: Path,
    seconds: float,
    worker: Worker,
) -> RepoOutcome:
    counts = {stage.stage: stage.count for stage in funnel.stages}
    repos = sorted((out / HIDDEN / REPOS).glob("*/tree"))
    return RepoOutcome(
        source=job.source,
        status="minted",
        key=funnel.repo,
        origin=job.origin,
        commit=funnel.commit,
        seconds=seconds,
        tasks=tasks,
        extracted=counts.get("extracted", 0),
        validated=counts.get("validated", 0),
        kill_rates=_kill_rates(out, tasks),
        setup_notes=funnel.setup_notes,
        drops=summed_reasons(d for s in funnel.stages for d in s.drops),
        licence=find_licence(repos[0]) if repos else None,
        worker=worker,
        kinds=job.kinds,
    )


def _kill_rates(out: Path, tasks: tuple[str, ...]) -> tuple[float, ...]:
    rates = []
    for ident in tasks:
        hidden = HiddenTask.model_validate_json((out / HIDDEN / ident / "task.json").read_text())
        if hidden.strength is not None:
            rates.append(hidden.strength.kill_rate)
    return tuple(rates)


def pack(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(folder, arcname=".")
    return buffer.getvalue()


def unpack(archive: bytes, into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="tar")  # our own archive; symlinks of the tree kept
