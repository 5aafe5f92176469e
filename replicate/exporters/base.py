"""The exporter contract: one method that writes the planned tasks of a batch somewhere."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from replicate.batch import Batch
from replicate.core import prompt, splits

if TYPE_CHECKING:
    from replicate.exporters.plan import ExportPlan


@dataclass(frozen=True)
class ExportOptions:
    """Settings every format may use.

    `split`: the split every row is for, without `split_by` (recorded in each row); `context`:
    how much of the target file a row's prompt shows; `split_by`: assign train or test by group
    (`replicate.core.splits`), at most `test_ratio` of the tasks test, the groups' hashes salted
    by `split_seed`."""

    split: str = splits.TRAIN
    build_images: bool = False  # harbor: also build the task images locally (docker)
    context: prompt.Context = prompt.Context.SIGNATURES
    split_by: splits.SplitBy | None = None
    test_ratio: float = 0.1
    split_seed: int = 0


@dataclass(frozen=True)
class Written:
    """What an exporter wrote: how many tasks, into which files, and what it could not do
    (one line each, printed as warnings)."""

    tasks: int
    files: tuple[Path, ...]
    warnings: tuple[str, ...] = ()


class Exporter(Protocol):
    """Writes the planned tasks of `batch` to `out` (a file or a folder, as the format says).

    `workdir` is where a folder format's model finds the repository (its workspace); None for a
    format whose model is shown a prompt only (rows). A format is registered by name in
    `replicate.exporters.registry.EXPORTERS`, built with no arguments when `replicate export
    --format` names it."""

    workdir: str | None

    def export(self, batch: Batch, plan: ExportPlan, out: Path, options: ExportOptions) -> Written:
        """Write every task of `plan` (in its order: which tasks, each one's shown code and
        split) and return what was written.

        Called once per `replicate export`. The same batch, plan and options give the same
        bytes (no clock, no random order). Raises `ReplicateError` (one line) for an `out` it
        cannot write or an option the format does not take. Never writes outside `out`, and
        never puts a task's hidden part (its body, inputs or expected outcomes) in what the
        model is shown: only the plan's prompt and workspace; a format that grades (a reward
        function, a verifier) reaches the hidden part through the grader at grading time."""
        ...
