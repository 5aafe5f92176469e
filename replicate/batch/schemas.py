"""The published JSON Schemas of the public contracts (`specs/*.schema.json`)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from replicate.core import Funnel, ResultRow, TaskSpec, Verdict

SCHEMAS: dict[str, type[BaseModel]] = {
    "task.schema.json": TaskSpec,
    "verdict.schema.json": Verdict,
    "result.schema.json": ResultRow,
    "funnel.schema.json": Funnel,
}


def schema_texts() -> dict[str, str]:
    return {
        name: json.dumps(model.model_json_schema(), indent=2, sort_keys=True) + "\n"
        for name, model in SCHEMAS.items()
    }


def write_schemas(batch: Path) -> None:
    folder = batch / "specs"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in schema_texts().items():
        path = folder / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
