"""Each task's difficulty on disk, and choosing tasks by it.

    DIR/difficulty.json   {"format": ..., "tasks": {"<id>": {"minted": ..., "difficulty": {...},
                                                               "solve": {...} | null}}}

`replicate gen` writes it last (after the manifest: it is not part of what the manifest covers,
so recording solve rates later does not make the batch look edited). Each entry carries `minted`,
a digest of the task's hidden `task.json` and `inputs.jsonl`: an entry whose task was minted
again is stale and is computed again (and its solve rate dropped); and `measure`, the version of
the measures (`replicate.core.difficulty.MEASURE`): under another, the difficulty is measured
again and the solve rate kept. The file only steers which
tasks are chosen, never how one is graded; a batch without it (older batches) or with an entry
missing or stale gets the difficulty computed from the batch when it is asked for.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from replicate import confined
from replicate.batch.manifest import Manifest, file_digest, read_manifest
from replicate.batch.store import HIDDEN, Batch, LoadedTask
from replicate.batch.visible import repo_index, stdlib_parents
from replicate.core import (
    BANDS,
    MEASURE,
    Band,
    CopyIndex,
    Difficulty,
    TaskKind,
    higher,
    measure,
    target_tokens,
)
from replicate.errors import ReplicateError

DIFFICULTY = "difficulty.json"
MAX_FILE_BYTES = 64_000_000  # a larger file is not read (the tasks are measured again)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SolveRate(_Frozen):
    """What one run observed on a task (`replicate report RUN_DIR --write-solve-rate`)."""

    attempts: int  # graded attempts (infrastructure errors left out)
    successes: int  # attempts that earned 1.0
    pass_rate: float | None  # successes / attempts
    mean_reward: float | None
    run: str  # the RUN_DIR it came from
    agent: str


class TaskDifficulty(_Frozen):
    minted: str  # digest of the task's hidden task.json and inputs.jsonl when measured
    measure: str  # `replicate.core.difficulty.MEASURE` when measured
    difficulty: Difficulty
    solve: SolveRate | None = None


class DifficultyFile(_Frozen):
    format: Literal["replicate-difficulty/1"] = "replicate-difficulty/1"
    tasks: dict[str, TaskDifficulty]

    def bands(self) -> dict[Band, int]:
        counts = Counter(entry.difficulty.band for entry in self.tasks.values())
        return {name: counts[name] for name in BANDS}


def read_difficulty(root: Path) -> DifficultyFile | None:
    """The batch's difficulty file; None when it is missing, a symlink, larger than
    `MAX_FILE_BYTES` or not one (the difficulty is then measured again)."""
    try:
        data = confined.read_bytes(root, DIFFICULTY, MAX_FILE_BYTES)
        if len(data) > MAX_FILE_BYTES:
            return None
        return DifficultyFile.model_validate_json(data)
    except (OSError, ReplicateError, ValidationError, ValueError):
        return None


def write_difficulty(
    root: Path, extra: Mapping[str, TaskDifficulty] | None = None
) -> DifficultyFile:
    """Measure every task of the batch at `root` (taking entries still current from the file
    there and from `extra`) and write the file."""
    batch = Batch(root)
    found = difficulties(batch, batch.ids, extra)
    written = DifficultyFile(tasks=dict(sorted(found.items())))
    _write(root, written)
    return written


def difficulties(
    batch: Batch, ids: Sequence[str], extra: Mapping[str, TaskDifficulty] | None = None
) -> dict[str, TaskDifficulty]:
    """Task id -> its entry: from the batch's file when still current, else measured now."""
    known = dict((read_difficulty(batch.root) or DifficultyFile(tasks={})).tasks)
    known.update(extra or {})
    manifest = _manifest(batch.root)
    indexes: dict[str, CopyIndex] = {}
    out: dict[str, TaskDifficulty] = {}
    for ident in ids:
        minted = _minted(batch.root, ident, manifest)
        entry = known.get(ident)
        if entry is not None and entry.minted != minted:
            entry = None  # the task was minted again: its measures and solve rate are stale
        if entry is None or entry.measure != MEASURE:
            measured = task_difficulty(batch.load(ident), indexes)
            solve = entry.solve if entry is not None else None  # the same task: still true
            entry = TaskDifficulty(minted=minted, measure=MEASURE, difficulty=measured, solve=solve)
        out[ident] = entry
    return out


def task_difficulty(task: LoadedTask, indexes: dict[str, CopyIndex] | None = None) -> Difficulty:
    """One task's difficulty; `indexes` keeps each repository's code index between tasks."""
    made = {} if indexes is None else indexes
    repo = task.hidden.repo_dir
    if repo not in made:
        made[repo] = repo_index(task.repo.tree)
    target = task.hidden.target
    source = task.original_source()
    own = range(target.def_span.start_line, target.def_span.end_line + 1)
    tokens = target_tokens(source, target.name, own)
    copy = higher(
        made[repo].best(tokens, skip=(target.path, own)),
        CopyIndex(stdlib_parents(source, target)).best(tokens),
    )
    strata: Counter[str] = Counter(item.stratum for item in task.inputs)
    strength = task.hidden.strength
    kill_rate = strength.kill_rate if strength is not None else None
    # no call sequences are stored with a task yet: once they are, their step counts go to
    # `measure(..., sequence_steps=...)` here
    return measure(source, target, strata, kill_rate, copy)


def record_solve_rates(root: Path, rates: Mapping[str, SolveRate]) -> int:
    """Put each task's observed solve rate next to its difficulty; the number recorded (tasks
    no longer in the batch are left out)."""
    batch = Batch(root)
    present = [ident for ident in rates if ident in set(batch.ids)]
    if not present:
        raise ReplicateError(f"none of the run's tasks is in the batch {root}")
    found = difficulties(batch, batch.ids)
    for ident in present:
        found[ident] = found[ident].model_copy(update={"solve": rates[ident]})
    _write(root, DifficultyFile(tasks=dict(sorted(found.items()))))
    return len(present)


def choose(
    batch: Batch,
    names: Iterable[str] = (),
    limit: int | None = None,
    bands: Sequence[Band] = (),
    max_solve_rate: float | None = None,
    kinds: Collection[TaskKind] = (),
) -> tuple[str, ...]:
    """`Batch.select`, keeping only the tasks of `kinds` (all when none) in `bands` (all when
    none) whose recorded solve rate is at most `max_solve_rate` (tasks without one are left
    out), then the limit; a one-line error when that leaves none."""
    chosen = batch.select(names)
    if kinds:
        chosen = tuple(i for i in chosen if batch.spec(i).task_kind in kinds)
        if not chosen:
            named = ",".join(sorted(kinds))
            raise ReplicateError(f"no task of {batch.root} is of the kinds {named}")
    if not bands and max_solve_rate is None:
        return chosen[:limit] if limit is not None else chosen
    found = difficulties(batch, chosen)
    if max_solve_rate is not None and not any(e.solve for e in found.values()):
        raise ReplicateError(
            f"no solve rates are recorded in {batch.root / DIFFICULTY}; write them with "
            "`replicate report RUN_DIR --write-solve-rate` after a run on this batch"
        )
    kept = tuple(
        ident
        for ident in chosen
        if (not bands or found[ident].difficulty.band in bands)
        and (max_solve_rate is None or _at_most(found[ident].solve, max_solve_rate))
    )
    if not kept:
        asked = [f"--difficulty {','.join(bands)}"] if bands else []
        asked += [f"--max-solve-rate {max_solve_rate}"] if max_solve_rate is not None else []
        raise ReplicateError(f"no task of {batch.root} is left by {' and '.join(asked)}")
    return kept[:limit] if limit is not None else kept


def parse_bands(values: Iterable[str]) -> tuple[Band, ...]:
    """Band names from repeated or comma-separated values; an unknown one is a one-line error."""
    out: list[Band] = []
    for value in values:
        for name in (part.strip() for part in value.split(",")):
            band = next((b for b in BANDS if b == name), None)
            if band is None:
                raise ReplicateError(f"unknown difficulty {name!r}; choose from {', '.join(BANDS)}")
            out.append(band)
    return tuple(dict.fromkeys(out))


def _at_most(solve: SolveRate | None, bound: float) -> bool:
    return solve is not None and solve.pass_rate is not None and solve.pass_rate <= bound


def _manifest(root: Path) -> Manifest | None:
    try:
        return read_manifest(root)
    except ReplicateError:
        return None


def _minted(root: Path, ident: str, manifest: Manifest | None) -> str:
    """A digest of the task's hidden task.json and inputs.jsonl (the manifest's, if it has them)."""
    digest = hashlib.sha256()
    for name in ("task.json", "inputs.jsonl"):
        rel = f"{HIDDEN}/{ident}/{name}"
        recorded = manifest.files.get(rel) if manifest is not None else None
        if recorded is None:
            path = root / rel
            recorded = file_digest(path) if path.is_file() else "missing"
        digest.update(f"{rel} {recorded}\n".encode())
    return "sha256:" + digest.hexdigest()


def _write(root: Path, found: DifficultyFile) -> None:
    """Written whole, then renamed into place; no symlink the batch holds is followed."""
    tmp = DIFFICULTY + ".tmp"
    confined.write_bytes(root, tmp, (found.model_dump_json(indent=1) + "\n").encode())
    (root / tmp).replace(root / DIFFICULTY)
