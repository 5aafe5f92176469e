"""One repository's job, wherever an executor runs it: mint into a scratch batch in a child
process (killed when the time budget runs out), then hand back the outcome and the scratch
batch packed as a tar archive (what moves between nodes)."""

from __future__ import annotations

import io
import os
import re
import signal
import socket
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from replicate import scratch
from replicate.batch import HIDDEN, REPOS
from replicate.core import Funnel, HiddenTask
from replicate.gen.many.child import ChildJob, ChildResult
from replicate.gen.many.ledger import RepoOutcome, Stage, Worker
from replicate.gen.many.licence import find_licence

TERM_GRACE_S = 10.0  # between SIGTERM (scratch cleaned) and SIGKILL
_TELLING = re.compile(r"^(Fatal Python error|([a-z_]\w*\.)*[A-Z]\w*: )")  # `pkg.mod.Name: ...`


@dataclass(frozen=True)
class RepoJob:
    source: str  # the line of the --repos file
    spec: str
    commit: str
    key: str
    limit: int | None
    sandbox: str
    workers: int
    min_kill_rate: float | None
    budget_s: float | None


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
    spec, report = tmp / "job.json", tmp / "result.json"
    child = ChildJob(
        repo=job.spec,
        commit=job.commit,
        out=out,
        limit=job.limit,
        sandbox=job.sandbox,
        workers=job.workers,
        min_kill_rate=job.min_kill_rate,
    )
    spec.write_text(child.model_dump_json(), encoding="utf-8")
    command = [sys.executable, "-m", "replicate.gen.many.child", str(spec), str(report)]
    with (tmp / "stderr.log").open("w+", encoding="utf-8", errors="replace") as log:
        process = subprocess.Popen(  # stdin: held open, never written (see child.py)
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
        try:
            process.wait(timeout=job.budget_s)
        except subprocess.TimeoutExpired:
            _stop(process)
            return ChildResult(error=f"out of time after {job.budget_s:g} s"), "budget", ""
        finally:
            _stop(process)
            if process.stdin is not None:
                process.stdin.close()
        log.seek(0)
        tail = log.read()[-2000:]
    try:
        return ChildResult.model_validate_json(report.read_text(encoding="utf-8")), "gen", ""
    except (OSError, ValidationError):
        return ChildResult(error=crash_reason(process.returncode, tail)), "gen", tail


def crash_reason(code: int, log: str) -> str:
    """One line: how the child ended, and the line of its stderr that says most."""
    how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    telling = [line for line in lines if _TELLING.match(line)]
    said = (telling or lines or [""])[-1]
    return f"gen crashed ({how})" + (f": {said}" if said else "")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the child's process group (its scratch removed), SIGKILL it if it lingers."""
    if process.poll() is not None:
        return
    for sig, grace in ((signal.SIGTERM, TERM_GRACE_S), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


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
        commit=funnel.commit,
        seconds=seconds,
        tasks=tasks,
        extracted=counts.get("extracted", 0),
        validated=counts.get("validated", 0),
        kill_rates=_kill_rates(out, tasks),
        setup_notes=funnel.setup_notes,
        licence=find_licence(repos[0]) if repos else None,
        worker=worker,
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
