"""A batch's JSON Lines files of records (`inputs.jsonl`, `sequences.jsonl`) read back, each line
one record of a model, through `replicate.jsonl` (the project's one way)."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from replicate import jsonl
from replicate.errors import ReplicateError

Model = TypeVar("Model", bound=BaseModel)


def parse_lines(model: type[Model], text: str, path: Path, task_id: str) -> list[Model]:
    """Each line of `text` (the file at `path`) as `model`; a one-line error naming the first
    line that is not one."""
    out = []
    for number, line in enumerate(jsonl.split(text), 1):
        try:
            out.append(jsonl.parse_model(model, line))
        except ValidationError:
            raise ReplicateError(f"task {task_id}: broken {path} at line {number}") from None
    return out
