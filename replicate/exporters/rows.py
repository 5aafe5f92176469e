"""The `rows` format: one row per task, as verl, SkyRL and TRL read a prompt dataset.

    data_source       "replicate"
    prompt            chat messages: one user message holding TASK.md and the part of the target
                      file `--context` shows (`replicate.core.prompt.render_row_prompt`)
    ability           "code"
    reward_model      {"style": "rule", "ground_truth": <task id>}
    extra_info        {"task_id", "repo", "commit", "path", "symbol", "split", "split_group",
                       "index", "tasks_dir"}
    task_id           the task id again, top-level (TRL passes dataset columns to reward functions)
    visible_task_ids  the tasks of the batch whose hidden body the prompt shows (searched for)

Written as PATH.parquet (pyarrow) and PATH.jsonl, the same rows; with `--split-by`, one pair per
split, PATH.train.* and PATH.test.*.  Only what an agent may see goes in: the prompt and the
stubbed file; hidden inputs, expected outcomes and the original body stay in the batch, where the
reward functions (`replicate.integrations`) find them by `tasks_dir`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from replicate import jsonl
from replicate.batch import Batch
from replicate.exporters.base import ExportOptions, Written
from replicate.exporters.plan import ExportPlan, PlannedTask

DATA_SOURCE = "replicate"
ABILITY = "code"
INFO_TEXT = ("task_id", "repo", "commit", "path", "symbol", "split", "split_group")


def task_row(batch: Batch, item: PlannedTask, index: int) -> dict[str, Any]:
    """One dataset row for one planned task (public material only)."""
    task = item.task
    source = task.spec.source
    return {
        "data_source": DATA_SOURCE,
        "prompt": [{"role": "user", "content": item.text}],
        "ability": ABILITY,
        "reward_model": {"style": "rule", "ground_truth": task.id},
        "extra_info": {
            "task_id": task.id,
            "repo": source.repo,
            "commit": source.commit,
            "path": source.path,
            "symbol": source.symbol,
            "split": item.placement.split,
            "split_group": item.placement.group,
            "index": index,
            "tasks_dir": str(batch.root.resolve()),
        },
        "task_id": task.id,
        "visible_task_ids": list(item.visible),
    }


def _schema() -> Any:
    import pyarrow as pa

    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    info = pa.struct(
        [(name, pa.string()) for name in INFO_TEXT]
        + [("index", pa.int64()), ("tasks_dir", pa.string())]
    )
    return pa.schema(
        [
            ("data_source", pa.string()),
            ("prompt", pa.list_(message)),
            ("ability", pa.string()),
            ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
            ("extra_info", info),
            ("task_id", pa.string()),
            ("visible_task_ids", pa.list_(pa.string())),
        ]
    )


def write_parquet(rows: Sequence[dict[str, Any]], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(list(rows), schema=_schema())
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def write_jsonl(rows: Sequence[dict[str, Any]], path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(jsonl.dumps(row, ensure_ascii=False))
    os.replace(tmp, path)


class RowsExporter:
    """PATH.parquet and PATH.jsonl, or with `--split-by` PATH.<split>.parquet and .jsonl per
    split (the suffix of `out`, if any, is replaced)."""

    workdir: str | None = None

    def export(self, batch: Batch, plan: ExportPlan, out: Path, options: ExportOptions) -> Written:
        out.parent.mkdir(parents=True, exist_ok=True)
        names = [None] if options.split_by is None else sorted({"train", "test"})
        files: list[Path] = []
        for name in names:
            chosen = [t for t in plan.tasks if name is None or t.placement.split == name]
            rows = [task_row(batch, item, index) for index, item in enumerate(chosen)]
            stem = out.with_suffix("").name + ("" if name is None else f".{name}")
            parquet, jsonl = out.parent / f"{stem}.parquet", out.parent / f"{stem}.jsonl"
            write_parquet(rows, parquet)
            write_jsonl(rows, jsonl)
            files += [parquet, jsonl]
        return Written(tasks=len(plan.tasks), files=tuple(files))
