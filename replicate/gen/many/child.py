"""One repository's minting in a process of its own (`python -m replicate.gen.many.child
JOB.json RESULT.json`): what the parent can kill when the repository's time budget runs out.
It calls the single-repository pipeline and writes the report, or the error, as JSON."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from replicate import scratch
from replicate.core.progress import NullProgress
from replicate.core.records import Funnel
from replicate.errors import ReplicateError
from replicate.gen.pipeline import GenOptions, mint

PR_SET_PDEATHSIG = 1


class ChildJob(BaseModel):
    """The single-repository options, as the parent hands them over."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repo: str
    commit: str
    out: Path
    limit: int | None
    sandbox: str
    workers: int
    min_kill_rate: float | None
    parent: int  # the parent's pid: when it dies, so does this process


class ChildResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    funnel: Funnel | None = None
    tasks: tuple[str, ...] = ()
    error: str | None = None


def run(job: ChildJob) -> ChildResult:
    options = GenOptions(
        repo=job.repo,
        out=job.out,
        commit=job.commit,
        limit=job.limit,
        sandbox=job.sandbox,
        workers=job.workers,
        min_kill_rate=job.min_kill_rate,
    )
    try:
        report = mint(options, NullProgress())
    except ReplicateError as exc:
        return ChildResult(error=str(exc))
    return ChildResult(funnel=report.funnel, tasks=report.task_ids)


def _die_with_parent(parent: int) -> None:
    """SIGKILL this process when its parent dies (a killed `gen --repos` leaves no minting)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)


def main(argv: list[str]) -> int:
    job = ChildJob.model_validate_json(Path(argv[0]).read_text(encoding="utf-8"))
    _die_with_parent(job.parent)
    scratch.install_signal_cleanup()
    result = run(job)
    Path(argv[1]).write_text(result.model_dump_json(), encoding="utf-8")
    return 0 if result.error is None else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
