"""One repository's minting in a process of its own (`python -m replicate.gen.many.child
JOB.json RESULT.json`): what the parent can kill when the repository's time budget runs out.
It calls the single-repository pipeline and writes the report, or the error, as JSON; it dies
with its parent (`process.die_with_parent`), so a killed `gen --repos` leaves nothing minting."""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from replicate.core import Funnel, NullProgress, TaskKind
from replicate.errors import ReplicateError
from replicate.gen.many.process import child_main, internal_error
from replicate.gen.pipeline import DEFAULT_KINDS, GenOptions, mint


class ChildJob(BaseModel):
    """The single-repository options, as the parent hands them over."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repo: str
    commit: str
    key: str  # the repository's key in the batch (`placing`), which its task ids derive from
    out: Path
    limit: int | None
    sandbox: str
    workers: int
    min_kill_rate: float | None
    kinds: tuple[TaskKind, ...] = tuple(sorted(DEFAULT_KINDS))  # to mint (`gen --kinds`)
    # stop starting targets after this many seconds and write what is minted (gen's --budget)
    soft_budget_s: float | None = None


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
        key=job.key,
        limit=job.limit,
        sandbox=job.sandbox,
        workers=job.workers,
        min_kill_rate=job.min_kill_rate,
        kinds=frozenset(job.kinds),
        budget_s=job.soft_budget_s,
    )
    try:
        report = mint(options, NullProgress())
    except ReplicateError as exc:
        return ChildResult(error=str(exc))
    except Exception as exc:  # noqa: BLE001 - a bug of gen's: this repository's failure, said
        return ChildResult(error=internal_error(exc))
    return ChildResult(funnel=report.funnel, tasks=report.task_ids)


def main(argv: list[str]) -> int:
    return child_main(argv, ChildJob, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
