"""`replicate validate`: check a whole batch before trusting it, and say what is wrong where.

Each task is loaded the way `run` and `grade` load it (schemas, names and paths, the target file
in its snapshot, its files against the manifest); the manifest is also compared with the whole
batch, so a file added beside the tasks shows too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from replicate.batch import minting
from replicate.batch.manifest import COVERED, differences, read_manifest
from replicate.batch.store import Batch
from replicate.errors import ReplicateError


@dataclass(frozen=True)
class TaskCheck:
    task_id: str
    symbol: str
    problem: str | None  # None: the task loads and matches the manifest


@dataclass(frozen=True)
class BatchCheck:
    root: Path
    manifest_problems: tuple[str, ...]  # whole-batch differences from the manifest
    tasks: tuple[TaskCheck, ...]

    @property
    def ok(self) -> bool:
        return not self.manifest_problems and all(t.problem is None for t in self.tasks)

    @property
    def refused(self) -> int:
        return sum(t.problem is not None for t in self.tasks)


def check_batch(path: Path, verify: bool = True) -> BatchCheck:
    """Every task of the batch at `path`, loaded and checked; a problem per task, never raised
    (a batch `gen` has not finished is refused in one line)."""
    if verify and path.is_dir():
        minting.check_finished(path.resolve(), len(Batch(path).ids))
    unverified = Batch.open(path, verify=False)  # a missing folder or no task: one-line error
    root = unverified.root
    manifest_problems: tuple[str, ...] = ()
    batch = unverified
    if verify:
        try:
            manifest = read_manifest(root)
        except ReplicateError as exc:
            return BatchCheck(root, (str(exc),), tuple(_check(unverified, i) for i in batch.ids))
        manifest_problems = tuple(p for top in COVERED for p in differences(root, manifest, top))
        batch = Batch(root, manifest)
    return BatchCheck(root, manifest_problems, tuple(_check(batch, i) for i in batch.ids))


def _check(batch: Batch, task_id: str) -> TaskCheck:
    try:
        task = batch.load(task_id)
    except ReplicateError as exc:
        return TaskCheck(task_id, "", str(exc))
    return TaskCheck(task_id, task.spec.source.symbol, None)
