"""TRL's reward function (GRPOTrainer `reward_funcs=[reward_func]`): the dataset's `task_id`
column names the task; completions are strings or lists of chat messages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replicate.integrations.grading import completion_text, grade_many, reward_of, tasks_dir


def reward_func(
    prompts: Sequence[Any], completions: Sequence[Any], task_id: Sequence[str], **kwargs: Any
) -> list[float | None]:
    """One reward per completion; None (skipped by TRL) for an infrastructure failure."""
    infos = kwargs.get("extra_info") or [None] * len(completions)
    items = [
        (tasks_dir(info), str(tid), completion_text(completion))
        for completion, tid, info in zip(completions, task_id, infos, strict=True)
    ]
    return [reward_of(verdict) for verdict in grade_many(items)]
