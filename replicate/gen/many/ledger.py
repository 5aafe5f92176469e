"""`DIR/repos.jsonl`: what became of each repository of a `--repos` minting, one line written as
each repository finishes (the last line of a source wins). A rerun skips the repositories whose
line says minted at the same commit, grader version and task kinds: the minting resumes."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from replicate import GRADER_VERSION, jsonl
from replicate.core import TaskKind

LEDGER = "repos.jsonl"
Stage = Literal["set-up", "gen", "budget"]


class Worker(BaseModel):
    """Where a repository was minted: the host and process that ran its job."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str
    pid: int


class RepoOutcome(BaseModel):
    """One repository's result. `stage` says where a failure happened: `set-up` (the source
    could not be acquired), `gen` (minting stopped with an error) or `budget` (out of time)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    status: Literal["minted", "failed"]
    grader_version: str = GRADER_VERSION
    key: str | None = None
    origin: str | None = None  # the repository's identity (`AcquiredRepo.origin`)
    commit: str | None = None
    stage: Stage | None = None
    reason: str | None = None
    seconds: float = 0.0
    tasks: tuple[str, ...] = ()
    extracted: int = 0
    validated: int = 0
    kill_rates: tuple[float, ...] = ()
    setup_notes: tuple[str, ...] = ()
    # the funnel's drop reasons by `DropReason` (its text, qualifiers aside), counts most first
    drops: tuple[tuple[str, int], ...] = ()
    licence: str | None = None
    worker: Worker | None = None
    log_tail: str = ""  # the end of the child's stderr, when its minting crashed
    # the task kinds asked for (`gen --kinds`); a line written before kinds: what gen minted
    # then, function and method
    kinds: tuple[TaskKind, ...] = (TaskKind.FUNCTION, TaskKind.METHOD)

    def done_at(self, key: str, commit: str, kinds: tuple[TaskKind, ...]) -> bool:
        """Minted at this commit by this grader version, of these kinds: nothing left to do."""
        return (
            self.status == "minted"
            and self.grader_version == GRADER_VERSION
            and (self.key, self.commit, self.kinds) == (key, commit, kinds)
        )


def read_ledger(batch: Path) -> dict[str, RepoOutcome]:
    """The last outcome of each source; a torn last line (the process was killed) is ignored."""
    path = batch / LEDGER
    if not path.is_file():
        return {}
    latest: dict[str, RepoOutcome] = {}
    for line in jsonl.split(path.read_text(encoding="utf-8", errors="replace")):
        try:
            outcome = jsonl.parse_model(RepoOutcome, line)
        except ValidationError:
            continue
        latest[outcome.source] = outcome
    return latest


def append_ledger(batch: Path, outcomes: Iterable[RepoOutcome]) -> None:
    """Append and flush to disk: a line written is a line a rerun reads."""
    batch.mkdir(parents=True, exist_ok=True)
    with (batch / LEDGER).open("a", encoding="utf-8") as handle:
        for outcome in outcomes:
            handle.write(jsonl.model_line(outcome))
        handle.flush()
        os.fsync(handle.fileno())
