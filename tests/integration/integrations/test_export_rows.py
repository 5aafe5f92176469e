"""`replicate export --format rows`: the columns verl/SkyRL/TRL read, and nothing hidden in them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.integrations.rows import cli, export_rows, leaks, read_jsonl, secrets_of
from tests.integration.minted import Tiny

COLUMNS = [
    "data_source",
    "prompt",
    "ability",
    "reward_model",
    "extra_info",
    "task_id",
    "visible_task_ids",
]


@pytest.fixture(scope="module")
def exported(tiny: Tiny, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_rows(tiny, tmp_path_factory.mktemp("export") / "rows.parquet")


def test_parquet_reads_back_with_datasets(tiny: Tiny, exported: Path) -> None:
    datasets = pytest.importorskip("datasets")
    data = datasets.load_dataset("parquet", data_files=str(exported), split="train")
    assert data.column_names == COLUMNS
    rows = list(data)
    assert [row["task_id"] for row in rows] == list(tiny.batch.ids)
    assert rows == read_jsonl(exported.with_suffix(".jsonl"))  # the same rows both ways
    for index, row in enumerate(rows):
        task = tiny.batch.load(row["task_id"])
        assert row["data_source"] == "replicate" and row["ability"] == "code"
        assert row["reward_model"] == {"style": "rule", "ground_truth": task.id}
        assert [m["role"] for m in row["prompt"]] == ["user"]
        content = row["prompt"][0]["content"]
        assert task.prompt.strip() in content and "raise NotImplementedError" in content
        info = row["extra_info"]
        assert info["symbol"] == task.spec.source.symbol and info["index"] == index
        assert info["commit"] == task.spec.source.commit and info["split"] == "train"
        assert Path(info["tasks_dir"]) == tiny.batch_dir.resolve() and info["split_group"] == ""
        assert set(row["visible_task_ids"]) <= set(tiny.batch.ids) - {task.id}


def test_no_row_holds_its_task_s_body_or_hidden_calls(tiny: Tiny, exported: Path) -> None:
    rows = read_jsonl(exported.with_suffix(".jsonl"))
    assert len(rows) == len(tiny.batch.ids)
    for row in rows:
        needles = secrets_of(tiny.batch.load(row["task_id"]))
        assert len(needles) > 1
        assert leaks(row, needles) == [], row["task_id"]


def test_the_leak_search_finds_a_planted_secret(tiny: Tiny, exported: Path) -> None:
    """Positive control: the body or a hidden call put into a row is found."""
    row = read_jsonl(exported.with_suffix(".jsonl"))[0]
    body, call = secrets_of(tiny.batch.load(row["task_id"]))[:2]
    planted = {**row, "prompt": [{"role": "user", "content": f"x {body} y"}]}
    assert leaks(planted, [body, call]) == [body]
    planted = {**row, "extra_info": {**row["extra_info"], "note": call}}
    assert leaks(planted, [body, call]) == [call]


def test_task_and_limit_choose_rows(tiny: Tiny, tmp_path: Path) -> None:
    symbol = "tinypkg.core.clamp"
    out = export_rows(tiny, tmp_path / "one", "--task", symbol, "--split", "test")
    rows = read_jsonl(out.with_suffix(".jsonl"))
    assert [r["extra_info"]["symbol"] for r in rows] == [symbol]
    assert rows[0]["extra_info"]["split"] == "test"
    out = export_rows(tiny, tmp_path / "two", "--limit", "2")
    assert len(read_jsonl(out.with_suffix(".jsonl"))) == 2


def test_unknown_format_is_one_line_naming_the_choices(tiny: Tiny, tmp_path: Path) -> None:
    done = cli(
        "export",
        "--tasks",
        str(tiny.batch_dir),
        "--out",
        str(tmp_path / "x"),
        "--format",
        "harbour",
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "unknown export format 'harbour'" in done.stderr and "rows" in done.stderr
    assert not list(tmp_path.iterdir())
