"""The `rows` format: one row per task, as verl, SkyRL and TRL read a prompt dataset.

    data_source   "replicate"
    prompt        chat messages: one user message holding TASK.md and the stubbed target file
    ability       "code"
    reward_model  {"style": "rule", "ground_truth": <task id>}
    extra_info    {"task_id", "repo", "commit", "path", "symbol", "split", "index", "tasks_dir"}
    task_id       the task id again, top-level (TRL passes dataset columns to reward functions)

Written as PATH.parquet (pyarrow) and PATH.jsonl, the same rows.  Only what an agent may see goes
in: the prompt and the stubbed file; hidden inputs, expected outcomes and the original body stay
in the batch, where the reward functions (`replicate.integrations`) find them by `tasks_dir`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from replicate import jsonl
from replicate.batch import Batch, LoadedTask
from replicate.exporters.base import ExportOptions, Written
from replicate.grading import stubbed_source

DATA_SOURCE = "replicate"
ABILITY = "code"
_BACKTICKS = re.compile(r"`{3,}")


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in `text`."""
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=2)
    return "`" * max(3, longest + 1)


def prompt_text(task: LoadedTask) -> str:
    """TASK.md, the stubbed target file, and how to answer."""
    target = task.hidden.target
    stub = stubbed_source(task).decode("utf-8", errors="replace")
    fence = _fence(stub)
    return "\n".join(
        [
            task.prompt.rstrip(),
            "",
            "## The file as it is now",
            "",
            f"`{target.path}`:",
            "",
            f"{fence}python",
            stub.rstrip("\n"),
            fence,
            "",
            f"Answer with your implementation of `{target.qualname}` in one ```python fenced "
            "block: its complete definition (the `def` line included), or the whole file.",
        ]
    )


def task_row(batch: Batch, task_id: str, index: int, split: str) -> dict[str, Any]:
    """One dataset row for one task (public material only)."""
    task = batch.load(task_id)
    source = task.spec.source
    return {
        "data_source": DATA_SOURCE,
        "prompt": [{"role": "user", "content": prompt_text(task)}],
        "ability": ABILITY,
        "reward_model": {"style": "rule", "ground_truth": task.id},
        "extra_info": {
            "task_id": task.id,
            "repo": source.repo,
            "commit": source.commit,
            "path": source.path,
            "symbol": source.symbol,
            "split": split,
            "index": index,
            "tasks_dir": str(batch.root.resolve()),
        },
        "task_id": task.id,
    }


def _schema() -> Any:
    import pyarrow as pa

    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    info = pa.struct(
        [(name, pa.string()) for name in ("task_id", "repo", "commit", "path", "symbol", "split")]
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
    """PATH.parquet and PATH.jsonl (the suffix of `out`, if any, is replaced)."""

    def export(
        self, batch: Batch, task_ids: Sequence[str], out: Path, options: ExportOptions
    ) -> Written:
        rows = [task_row(batch, tid, i, options.split) for i, tid in enumerate(task_ids)]
        out.parent.mkdir(parents=True, exist_ok=True)
        parquet, jsonl = out.with_suffix(".parquet"), out.with_suffix(".jsonl")
        write_parquet(rows, parquet)
        write_jsonl(rows, jsonl)
        return Written(tasks=len(rows), files=(parquet, jsonl))
