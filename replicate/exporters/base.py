"""The exporter contract: one method that writes the chosen tasks of a batch somewhere."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from replicate.batch import Batch


@dataclass(frozen=True)
class ExportOptions:
    """Settings every format may use."""

    split: str = "train"  # the dataset split the rows are for (recorded in each row)
    build_images: bool = False  # harbor: also build the task images locally (docker)


@dataclass(frozen=True)
class Written:
    """What an exporter wrote: how many tasks, into which files."""

    tasks: int
    files: tuple[Path, ...]


class Exporter(Protocol):
    """Writes the tasks `task_ids` of `batch` to `out` (a file or a folder, as the format says)."""

    def export(
        self, batch: Batch, task_ids: Sequence[str], out: Path, options: ExportOptions
    ) -> Written: ...
