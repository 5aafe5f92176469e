"""One repository's minting in a process of its own (`python -m replicate.gen.many.child
JOB.json RESULT.json`): what the parent can kill when the repository's time budget runs out.
It calls the single-repository pipeline and writes the report, or the error, as JSON.

The parent holds the child's stdin open and never writes to it: end of file there means the
parent died (even by SIGKILL), and the child then kills its own process group, the processes
it started with it (pip, git), so that a killed `gen --repos` leaves nothing minting."""

from __future__ import annotations

import os
import signal
import sys
import threading
import traceback
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from replicate import scratch
from replicate.core import Funnel, NullProgress
from replicate.errors import ReplicateError
from replicate.gen.pipeline import GenOptions, mint


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
    except Exception as exc:  # noqa: BLE001 - a bug of gen's: this repository's failure, said
        traceback.print_exc()
        first = str(exc).splitlines()[0] if str(exc) else ""
        return ChildResult(error=f"internal error: {type(exc).__name__}: {first}")
    return ChildResult(funnel=report.funnel, tasks=report.task_ids)


def _die_with_parent() -> None:
    """Kill this process group when stdin reaches its end (the parent is gone)."""

    def watch() -> None:
        while os.read(0, 1 << 16):  # the raw fd: no buffer lock held at interpreter shutdown
            continue
        os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def main(argv: list[str]) -> int:
    job = ChildJob.model_validate_json(Path(argv[0]).read_text(encoding="utf-8"))
    _die_with_parent()
    scratch.install_signal_cleanup()
    result = run(job)
    Path(argv[1]).write_text(result.model_dump_json(), encoding="utf-8")
    return 0 if result.error is None else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
