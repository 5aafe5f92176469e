"""The task batch on disk: reading and writing it, its manifest and schemas, the checks of its
untrusted fields, `validate`, and the difficulty file."""

from __future__ import annotations

from replicate.batch.difficulty_file import (
    DIFFICULTY,
    SolveRate,
    choose,
    difficulties,
    parse_bands,
    read_difficulty,
    record_solve_rates,
    write_difficulty,
)
from replicate.batch.manifest import MANIFEST, write_manifest
from replicate.batch.schemas import write_schemas
from replicate.batch.store import (
    HIDDEN,
    REPOS,
    SPECS,
    Batch,
    LoadedTask,
    RepoSnapshot,
    StoredOutcome,
    TaskFiles,
    read_task_files,
    remove_task,
    write_repo,
    write_task,
)
from replicate.batch.validate import BatchCheck, check_batch
from replicate.batch.visible import read_source

__all__ = [
    "DIFFICULTY",
    "HIDDEN",
    "MANIFEST",
    "REPOS",
    "SPECS",
    "Batch",
    "BatchCheck",
    "LoadedTask",
    "RepoSnapshot",
    "SolveRate",
    "StoredOutcome",
    "TaskFiles",
    "check_batch",
    "choose",
    "difficulties",
    "parse_bands",
    "read_difficulty",
    "read_source",
    "read_task_files",
    "record_solve_rates",
    "remove_task",
    "write_difficulty",
    "write_manifest",
    "write_repo",
    "write_schemas",
    "write_task",
]
