"""The `inspect` format: an inspect_ai task file, its samples and their workspaces.

    OUT/replicate_inspect.py        `@task replicate_tasks(sandbox=None, sandbox_config=None)`
    OUT/samples.json                per task: id, instruction, metadata, workspace folder; the batch
    OUT/workspaces/<id>/            the stubbed tree and TASK.md: the sample's files

`inspect eval OUT/replicate_inspect.py --model M` runs one sample per task; the scorer reads the
target file out of the sample's sandbox and grades it on the host through the batch
(`replicate.integrations.inspect_task`), so only what an agent may see is copied anywhere.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from replicate.batch import Batch, LoadedTask
from replicate.errors import ReplicateError
from replicate.exporters.base import ExportOptions, Written
from replicate.exporters.plan import ExportPlan, PlannedTask
from replicate.exporters.workspace import write_workspace
from replicate.integrations.inspect_task import SAMPLES_NAME

TASK_FILE = "replicate_inspect.py"
WORKSPACES = "workspaces"
WORKDIR = "the current working directory"

TASK_SOURCE = '''"""inspect_ai tasks exported by `replicate export --format inspect` (do not edit).

    inspect eval replicate_inspect.py --model MODEL [-T sandbox=docker|local -T sandbox_config=FILE]

The sandbox is docker where Docker Engine 24+ answers, else local (said in one line).

Grading needs this package (replicate-rl) and the batch named in samples.json on this machine.
"""

from pathlib import Path

from inspect_ai import Task, task

from replicate.integrations.inspect_task import build_task

SAMPLES = Path(__file__).resolve().parent / "samples.json"


@task
def replicate_tasks(sandbox: str | None = None, sandbox_config: str | None = None) -> Task:
    return build_task(SAMPLES, sandbox=sandbox, sandbox_config=sandbox_config)
'''


def ensure_empty(out: Path) -> None:
    """`out` is absent or an empty folder; a one-line error otherwise."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ReplicateError(f"output folder must be absent or empty: {out}")
    out.mkdir(parents=True, exist_ok=True)


def metadata(task: LoadedTask) -> dict[str, Any]:
    source = task.spec.source
    return {
        "task_id": task.id,
        "repo": source.repo,
        "commit": source.commit,
        "path": task.hidden.target.path,
        "symbol": source.symbol,
    }


def write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def planned_metadata(item: PlannedTask) -> dict[str, Any]:
    """A task's metadata, its split and the tasks whose hidden bodies its workspace shows."""
    placement = item.placement
    return {
        **metadata(item.task),
        "split": placement.split,
        "split_group": placement.group,
        "visible_task_ids": list(item.visible),
    }


class InspectExporter:
    """OUT/ as above (`out` must be absent or an empty folder)."""

    workdir: str | None = WORKDIR

    def export(self, batch: Batch, plan: ExportPlan, out: Path, options: ExportOptions) -> Written:
        ensure_empty(out)
        samples = []
        for item in plan.tasks:
            task = item.task
            folder = f"{WORKSPACES}/{task.id}"
            write_workspace(task, out / folder)
            samples.append(
                {
                    "task_id": task.id,
                    "instruction": item.text,
                    "metadata": planned_metadata(item),
                    "workspace": folder,
                }
            )
        payload = {"tasks_dir": str(batch.root.resolve()), "samples": samples}
        write_text(out / SAMPLES_NAME, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        write_text(out / TASK_FILE, TASK_SOURCE)
        files = (out / TASK_FILE, out / SAMPLES_NAME, out / WORKSPACES)
        return Written(tasks=len(samples), files=files)
