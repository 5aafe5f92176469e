"""verl's custom reward function: `custom_reward_function.path` = this file, `name` =
`compute_score`.  Rows come from `replicate export --format rows` (ground truth = task id)."""

from __future__ import annotations

from typing import Any

from replicate.integrations.grading import grader_for, recall_extras, reward_of, tasks_dir


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: str,
    extra_info: dict[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """{"score": reward, "infra_error": bool, "copy": share, "copy_run": tokens}; an
    infrastructure failure scores 0 and says so.  `copy` and `copy_run` say how much of the
    completion's body is the hidden original's (docs/design.md §4, Recall), never part of the
    score."""
    verdict = grader_for(tasks_dir(extra_info)).grade(str(ground_truth), solution_str)
    reward = reward_of(verdict)
    return {
        "score": 0.0 if reward is None else reward,
        "infra_error": reward is None,
        **recall_extras(verdict),
    }
