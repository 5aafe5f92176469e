"""What `replicate report` reads from a RUN_DIR: its rows, its identity, the transcripts of
built-in agents, and (when the batch it ran on is still where run.json says) each task's
repository and stubbed target file, for grouping and diffs.  Everything read here is untrusted
text for display: the HTML layer escapes it."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from replicate import confined, jsonl
from replicate.batch import Batch, difficulties
from replicate.core import Difficulty, ResultRow
from replicate.errors import ReplicateError
from replicate.scoring.results import RESULTS_FILE, RUN_FILE

MAX_SHOWN_BYTES = 200_000  # a transcript or a diff longer than this is cut for display


@dataclass(frozen=True)
class TaskInfo:
    """What the batch says about a task (empty when the batch is gone)."""

    symbol: str
    repo: str
    stubbed: str | None = None  # the target file as the agent got it, for the diff
    difficulty: Difficulty | None = None


@dataclass(frozen=True)
class RunData:
    path: Path
    rows: tuple[ResultRow, ...]
    samples: int
    agent: str
    tasks_dir: str
    info: Mapping[str, TaskInfo] = field(default_factory=dict)
    torn: int = 0  # lines of results.jsonl that are not rows (skipped)

    def symbol(self, task_id: str) -> str:
        found = self.info.get(task_id)
        return found.symbol if found else task_id

    def repo(self, task_id: str) -> str:
        found = self.info.get(task_id)
        return found.repo if found else "(unknown)"

    def difficulty(self, task_id: str) -> Difficulty | None:
        found = self.info.get(task_id)
        return found.difficulty if found else None


def load_run(run_dir: Path) -> RunData:
    """RUN_DIR's rows in file order of first appearance (the last row per task and sample)."""
    if not (run_dir / RESULTS_FILE).is_file():
        raise ReplicateError(f"{run_dir} is not a run directory: it has no {RESULTS_FILE}")
    rows, torn = _rows(run_dir / RESULTS_FILE)
    identity = _identity(run_dir)
    recorded = identity.get("samples")
    seen = max((r.sample for r in rows), default=0) + 1
    samples = recorded if isinstance(recorded, int) and recorded > 0 else seen
    tasks_dir = str(identity.get("tasks") or "")
    return RunData(
        path=run_dir,
        rows=rows,
        samples=max(samples, seen),
        agent=str(identity.get("agent") or "(unknown)"),
        tasks_dir=tasks_dir,
        info=_task_info(tasks_dir, {r.task_id for r in rows}),
        torn=torn,
    )


def _rows(path: Path) -> tuple[tuple[ResultRow, ...], int]:
    """The last row per (task, sample), and how many lines were not rows (a run cut short by a
    crash leaves a torn last line; the next `run` moves it aside, the report skips it)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ReplicateError(f"cannot read {path}: {exc.strerror}") from None
    rows: dict[tuple[str, int], ResultRow] = {}
    torn = 0
    for line in jsonl.split(text):
        if not line.strip():
            continue
        try:
            row = jsonl.parse_model(ResultRow, line)
        except ValidationError:
            torn += 1
            continue
        rows[(row.task_id, row.sample)] = row
    return tuple(rows.values()), torn


def _identity(run_dir: Path) -> dict[str, object]:
    try:
        data = json.loads((run_dir / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _task_info(tasks_dir: str, ids: set[str]) -> dict[str, TaskInfo]:
    """Symbol, repository and stubbed file per task, from the batch if it can still be read
    (without the manifest check: the report shows, it does not grade)."""
    if not tasks_dir:
        return {}
    try:
        batch = Batch.open(tasks_dir, verify=False)
    except (ReplicateError, OSError):
        return {}
    present = sorted(ids & set(batch.ids))
    hardness = _difficulties(batch, present)
    out: dict[str, TaskInfo] = {}
    for ident in present:
        try:
            task = batch.load(ident)
            stubbed = task.stubbed_source().decode("utf-8", "replace")
        except (ReplicateError, OSError, ValueError):
            continue
        source = task.spec.source
        out[ident] = TaskInfo(source.symbol, source.repo, stubbed, hardness.get(ident))
    return out


def _difficulties(batch: Batch, ids: list[str]) -> dict[str, Difficulty]:
    """Each task's difficulty (from the batch's file, or measured now); none if a task is broken."""
    try:
        return {ident: e.difficulty for ident, e in difficulties(batch, ids).items()}
    except (ReplicateError, OSError, ValueError):
        return {}


def transcript(run: RunData, task_id: str, sample: int) -> str | None:
    """A built-in agent's transcript, pretty-printed (None: the agent kept none)."""
    try:
        data = confined.read_bytes(run.path, f"transcripts/{task_id}/{sample}.json")
    except (OSError, ValueError, ReplicateError):
        return None
    return _cut(data.decode("utf-8", "replace"))


def candidate_diff(run: RunData, task_id: str, sample: int) -> str | None:
    """The unified diff from the stubbed target file to the candidate the run kept."""
    found = run.info.get(task_id)
    if found is None or found.stubbed is None:
        return None
    try:
        data = confined.read_bytes(run.path, f"candidates/{task_id}/{sample}.py")
    except (OSError, ValueError, ReplicateError):
        return None
    lines = difflib.unified_diff(
        found.stubbed.splitlines(keepends=True),
        data.decode("utf-8", "replace").splitlines(keepends=True),
        fromfile="stub",
        tofile=f"candidate #{sample}",
    )
    return _cut("".join(lines))


def _cut(text: str) -> str:
    if len(text) <= MAX_SHOWN_BYTES:
        return text
    return text[:MAX_SHOWN_BYTES] + f"\n... ({len(text) - MAX_SHOWN_BYTES} more characters)"
