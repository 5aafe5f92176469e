"""Where each target's outcome goes as soon as it is known, in target order: the leak audit and
the task's files (a minted task), the ledger line (`replicate.gen.ledger`), the funnel count and
the progress. A `gen` killed mid-mint leaves every task it announced complete on disk. A task
whose files cannot be written, or read back as `run` reads them, is that target's drop (its
files removed, the reason in the ledger); the gen goes on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from replicate.batch import read_task_files, remove_task, write_task
from replicate.core import DropReason, LedgerEntry, Progress
from replicate.errors import ReplicateError
from replicate.gen.audit import LeakAudit
from replicate.gen.funnel import STAGES, FunnelCounter, stage_before
from replicate.gen.ledger import Ledger
from replicate.gen.target import Dropped, Minted


@dataclass(frozen=True)
class NotStarted:
    """A target the time budget left unstarted (it stays undecided: a later run mints it)."""


class Publisher:
    def __init__(
        self, out: Path, ledger: Ledger, counter: FunnelCounter, audit: LeakAudit, show: Progress
    ) -> None:
        self.out = out
        self.ledger = ledger
        self.counter = counter
        self.audit = audit
        self.show = show
        self.task_ids: list[str] = []
        self.resumed = 0  # targets decided by an earlier run, taken from the ledger

    def resume(self, entry: LedgerEntry) -> None:
        """Count a target an earlier run decided, without redoing it."""
        self.resumed += 1
        self._count(entry)

    def dropped(self, symbol: str, stage: str, reason: str, detail: str = "") -> None:
        entry = self.ledger.entry(symbol, stage_before(stage), reason=reason, detail=detail)
        self._record(entry)

    def outcome(self, symbol: str, result: Minted | Dropped) -> None:
        if isinstance(result, Dropped):
            self.dropped(symbol, result.stage, result.reason, result.detail)
            return
        task = result.task
        leak = self.audit.leaks([task]).get(task.id)
        if leak is not None:  # docs/design.md §4
            reason = DropReason.LEAKED.says(leak.what)
            entry = self.ledger.entry(symbol, STAGES[-2], reason=reason, detail=str(leak.path))
        else:
            entry = self._written(symbol, result)
        self._record(entry)

    def _written(self, symbol: str, result: Minted) -> LedgerEntry:
        """Write the task and read it back; a failure of either drops it (files removed)."""
        task = result.task
        doing = DropReason.TASK_FILES_NOT_WRITTEN
        try:
            write_task(
                self.out,
                task.spec,
                task.hidden,
                task.prompt,
                task.inputs,
                task.expected,
                task.sequences,
            )
            doing = DropReason.TASK_FILES_NOT_READ_BACK
            read_task_files(self.out, task.id)
        except (OSError, ValueError, ReplicateError) as exc:
            remove_task(self.out, task.id)
            detail = " ".join(str(exc).split()) or type(exc).__name__
            return self.ledger.entry(symbol, STAGES[-2], reason=doing, detail=detail[:500])
        return self.ledger.entry(symbol, STAGES[-1], task_id=task.id)

    def skipped(self, reason: DropReason, n: int) -> None:
        """Targets traced but not minted by this run (--limit, the time budget): not decided."""
        if n > 0:
            self.counter.keep(STAGES[1], n)
            self.counter.drop(STAGES[2], reason, n)

    def _record(self, entry: LedgerEntry) -> None:
        self.ledger.append(entry)  # after the task's files: a listed task is a complete one
        self._count(entry)

    def _count(self, entry: LedgerEntry) -> None:
        self.counter.replay(entry)
        if entry.kept and entry.task_id:
            self.task_ids.append(entry.task_id)
            self.show.tasks(len(self.task_ids))
