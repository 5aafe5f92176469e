"""The batch's ledger of targets, `DIR/funnel.jsonl`: one line per target once its outcome is known.

Each line is a `LedgerEntry` (repository, commit, grader version, strength threshold, symbol, the
furthest funnel stage kept, kept or dropped, the task minted, the drop reason and a detail),
appended and flushed as soon as the target is decided. A `gen` killed mid-mint, or stopped at its
`--budget`, and run again with the same --repo and --out reads it and does not redo the targets
already decided under the same repository, commit, grader version and strength threshold; later
lines win over earlier ones. The file sits beside `specs/` and `reference_impls/`, outside the
manifest: it records how the batch was made, not what an agent is graded on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from replicate import confined, jsonl
from replicate.batch import SPECS
from replicate.core import LedgerEntry, name_problem

LEDGER = "funnel.jsonl"


@dataclass(frozen=True)
class LedgerKey:
    """What a decision depends on besides the target: a change of any of them redoes it."""

    repo: str
    commit: str
    grader_version: str
    min_kill_rate: float | None

    def matches(self, entry: LedgerEntry) -> bool:
        return (entry.repo, entry.commit, entry.grader_version, entry.min_kill_rate) == (
            self.repo,
            self.commit,
            self.grader_version,
            self.min_kill_rate,
        )


def read_entries(out: Path) -> list[LedgerEntry]:
    """Every well-formed line of the ledger, in order (a line torn by a kill is skipped)."""
    try:
        data = confined.read_bytes(out, LEDGER)
    except FileNotFoundError:
        return []
    entries = []
    for line in jsonl.split(data.decode("utf-8", errors="replace")):
        try:
            entries.append(jsonl.parse_model(LedgerEntry, line))
        except ValidationError:
            continue
    return entries


def decided(out: Path, key: LedgerKey) -> dict[str, LedgerEntry]:
    """Symbol -> its latest outcome under `key`; a minted target counts only while its task's
    files are complete (the public `task.json` is written last)."""
    found: dict[str, LedgerEntry] = {}
    for entry in read_entries(out):
        if key.matches(entry):
            found[entry.symbol] = entry
    return {
        symbol: entry
        for symbol, entry in found.items()
        if not entry.kept or (entry.task_id and _task_written(out, entry.task_id))
    }


def _task_written(out: Path, task_id: str) -> bool:
    """The task's public `task.json` is there (an id that is no plain name never is)."""
    return not name_problem(task_id) and (out / SPECS / task_id / "task.json").is_file()


def carry_over(
    batch: Path, staged: Path | None, repo: str, commits: tuple[str, ...] | None = None
) -> None:
    """A `--repos` merge: repository `repo`'s lines of `batch`'s ledger (at `commits`; None: at
    any) replaced by the ledger of `staged` (the batch its own `gen` wrote; None: by nothing),
    so `explain` and a later `gen --repo` read them."""
    kept = [
        entry
        for entry in read_entries(batch)
        if entry.repo != repo or (commits is not None and entry.commit not in commits)
    ]
    added = read_entries(staged) if staged is not None else []
    if not (batch / LEDGER).is_file() and not added:
        return
    lines = [jsonl.model_line(entry).encode() for entry in (*kept, *added)]
    confined.write_bytes(batch, LEDGER, b"".join(lines))


class Ledger:
    """Appends one line per decided target to `out/funnel.jsonl`."""

    def __init__(self, out: Path, key: LedgerKey) -> None:
        self.out = out
        self.key = key
        _end_torn_line(out)

    def entry(
        self,
        symbol: str,
        stage: str,
        *,
        task_id: str | None = None,
        reason: str = "",
        detail: str = "",
    ) -> LedgerEntry:
        """The entry of a target kept up to `stage` (minted when it is given a task id)."""
        return LedgerEntry(
            repo=self.key.repo,
            commit=self.key.commit,
            grader_version=self.key.grader_version,
            min_kill_rate=self.key.min_kill_rate,
            symbol=symbol,
            stage=stage,
            kept=task_id is not None,
            task_id=task_id,
            reason=reason,
            detail=detail,
        )

    def append(self, entry: LedgerEntry) -> None:
        confined.append_bytes(self.out, LEDGER, jsonl.model_line(entry).encode())


def _end_torn_line(out: Path) -> None:
    """A kill in the middle of an append leaves a line without its newline: end it, so the next
    entry starts a line of its own (the torn one is skipped when read)."""
    try:
        data = confined.read_bytes(out, LEDGER)
    except FileNotFoundError:
        return
    if data and not data.endswith(b"\n"):
        confined.append_bytes(out, LEDGER, b"\n")
