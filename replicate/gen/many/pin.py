"""Pinning a source of a `--repos` file (acquiring it: a clone, a fetch, a folder's snapshot)
in a child process of its own, within the repository's time budget: a source that cannot be
acquired, that takes too long or that crashes the acquiring is that repository's set-up failure,
never the command's (`python -m replicate.gen.many.pin JOB RESULT` is the child's end)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from replicate import scratch
from replicate.acquire import acquire
from replicate.cache import cache_root
from replicate.errors import ReplicateError
from replicate.gen.many.process import child_main, crash_reason, internal_error, run_child


class PinJob(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    spec: str
    commit: str | None


class Pinned(BaseModel):
    """A source pinned: its repository's name and identity (`AcquiredRepo.key`, `.origin`), the
    commit, and the seconds it took (spent from the repository's budget)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    origin: str
    commit: str
    seconds: float = 0.0


class PinResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    pinned: Pinned | None = None
    error: str | None = None


def pin_source(spec: str, commit: str | None, budget_s: float | None) -> Pinned:
    """Pin `spec` at `commit` in a child process; any failure is a one-line `ReplicateError`."""
    started = time.monotonic()
    with scratch.temporary_dir("replicate-pin-") as tmp:
        job = PinJob(spec=spec, commit=commit)
        ended = run_child("replicate.gen.many.pin", job, Path(tmp), budget_s)
    if ended.out_of_time:
        raise ReplicateError(f"out of time after {budget_s:g} s while acquiring {spec}")
    try:
        result = PinResult.model_validate_json(ended.report or "")
    except ValidationError:
        raise ReplicateError(crash_reason(ended.code, ended.log_tail, "acquiring")) from None
    if result.pinned is None:
        raise ReplicateError(result.error or f"cannot acquire {spec}")
    seconds = round(time.monotonic() - started, 1)
    return result.pinned.model_copy(update={"seconds": seconds})


def run(job: PinJob) -> PinResult:
    try:
        repo = acquire(job.spec, job.commit, cache_root())
    except ReplicateError as exc:
        return PinResult(error=str(exc))
    except Exception as exc:  # noqa: BLE001 - a bug of acquiring: this repository's failure
        return PinResult(error=internal_error(exc))
    return PinResult(pinned=Pinned(key=repo.key, origin=repo.origin, commit=repo.commit))


def main(argv: list[str]) -> int:
    return child_main(argv, PinJob, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
