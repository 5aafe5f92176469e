"""The public surface, pinned: a change here must be a deliberate, reviewed change."""

from __future__ import annotations

import json
from pathlib import Path

import replicate
from replicate.batch.schemas import SCHEMAS, schema_texts, write_schemas
from replicate.core.records import Funnel, ResultRow, TaskSpec, Verdict

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_package_all_is_pinned() -> None:
    assert replicate.__all__ == ["GRADER_VERSION", "__version__"]
    assert replicate.__version__ == "0.1.0"
    assert replicate.GRADER_VERSION == "replicate-grader/12"


def test_published_schemas_match_the_committed_files() -> None:
    texts = schema_texts()
    assert set(texts) == {
        "task.schema.json",
        "verdict.schema.json",
        "result.schema.json",
        "funnel.schema.json",
    }
    for name, text in texts.items():
        committed = (REPO_ROOT / "specs" / name).read_text(encoding="utf-8")
        assert committed == text, f"specs/{name} is out of date: the contract changed"


def test_schemas_name_their_records() -> None:
    assert {
        "task.schema.json": TaskSpec,
        "verdict.schema.json": Verdict,
        "result.schema.json": ResultRow,
        "funnel.schema.json": Funnel,
    } == SCHEMAS
    task = json.loads(schema_texts()["task.schema.json"])
    assert {"id", "source", "kind", "signature", "hidden_inputs"} <= set(task["required"])
    source = task["$defs"]["Source"]
    assert set(source["required"]) == {"repo", "commit", "path", "symbol"}
    row = json.loads(schema_texts()["result.schema.json"])
    assert {
        "task_id",
        "reward",
        "status",
        "reason",
        "agent_status",
        "agent_exit_code",
        "duration_s",
        "verdict",
    } <= set(row["required"])
    assert row["properties"]["sample"]["default"] == 0


def test_write_schemas_writes_and_leaves_equal_files_alone(tmp_path: Path) -> None:
    write_schemas(tmp_path)
    folder = tmp_path / "specs"
    assert {p.name: p.read_text() for p in folder.iterdir()} == schema_texts()
    path = folder / "task.schema.json"
    stamp = path.stat().st_mtime_ns
    write_schemas(tmp_path)
    assert path.stat().st_mtime_ns == stamp
    path.write_text("{}")
    write_schemas(tmp_path)
    assert path.read_text() == schema_texts()["task.schema.json"]
