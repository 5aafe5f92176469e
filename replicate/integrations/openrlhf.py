"""OpenRLHF's custom reward function (`--remote_rm_url path/to/this/file.py`, `--label_key
task_id`): each query is prompt + response decoded with special tokens kept (the prompt perhaps
cut from the front: `core.response_of_query` finds the response), each label a task id; the
batch is `$REPLICATE_TASKS`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replicate.core import response_of_query
from replicate.integrations.grading import extra_logs, grade_many, reward_of, tasks_dir


def _tensor(values: list[float]) -> Any:
    """A torch tensor when torch is importable (OpenRLHF has it), else the list."""
    try:
        import torch
    except ImportError:
        return values
    return torch.tensor(values, dtype=torch.float)


def reward_func(
    queries: Sequence[str], prompts: Sequence[str], labels: Sequence[str], **kwargs: Any
) -> dict[str, Any]:
    """{"rewards", "scores", "extra_logs": {"infra_error", "copy", "copy_run"}}; an
    infrastructure failure scores 0 and is flagged 1.0 in `infra_error`; `copy` and `copy_run`
    say how much of each response's body is the hidden original's (docs/design.md §4)."""
    root = tasks_dir()
    items = [
        (root, str(label), response_of_query(query, prompt))
        for query, prompt, label in zip(queries, prompts, labels, strict=True)
    ]
    verdicts = grade_many(items)
    rewards = [reward_of(verdict) for verdict in verdicts]
    values = [0.0 if r is None else r for r in rewards]
    logs = {name: _tensor(column) for name, column in extra_logs(verdicts).items()}
    return {"rewards": _tensor(values), "scores": _tensor(values), "extra_logs": logs}
