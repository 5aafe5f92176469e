"""Helpers shared by the export and serve tests: export the tiny batch, candidates, a searcher."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from replicate.batch.store import LoadedTask
from replicate.grading.grader import original_source, stubbed_source
from tests.integration.minted import Tiny, run_cli

cli = run_cli  # the tests of this folder call it `cli`


def export_rows(tiny: Tiny, out: Path, *extra: str) -> Path:
    done = cli("export", "--tasks", str(tiny.batch_dir), "--out", str(out), "--json", *extra)
    assert done.returncode == 0, done.stderr
    return out.with_suffix(".parquet")


def strings(value: Any) -> Iterator[str]:
    """Every string inside a row (keys too), however nested."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)


def body_text(task: LoadedTask) -> str:
    span = task.hidden.target.body_span
    return original_source(task)[span.start_byte : span.end_byte].decode().strip()


def secrets_of(task: LoadedTask) -> list[str]:
    """What must never reach a row of this task: the original body and the hidden calls."""
    return [body_text(task), *(item.call for item in task.inputs if item.call)]


def leaks(row: dict[str, Any], needles: list[str]) -> list[str]:
    texts = list(strings(row))
    return [needle for needle in needles if any(needle in text for text in texts)]


def candidates(task: LoadedTask) -> dict[str, str]:
    """Completions as a model writes them: the right answer three ways, and the stub."""
    original = original_source(task).decode()
    span = task.hidden.target.def_span
    definition = original_source(task)[span.start_byte : span.end_byte].decode()
    return {
        "whole_file": original,
        "fenced_def": f"Here it is:\n\n```python\n{definition}\n```\n\nDone.",
        "bare_def": definition,
        "stub": stubbed_source(task).decode(),
    }


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
