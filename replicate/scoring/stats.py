"""Per-task statistics over the samples of a run (`--samples K`): mean reward and pass@k.

pass@k is the unbiased estimator over n graded attempts of which c succeeded (reward 1.0):
1 - C(n - c, k) / C(n, k), the chance that k attempts drawn without replacement from the n hold
at least one success.  Attempts that are infrastructure errors (reward None) are not attempts
of the model and are left out of n; pass@k is None when fewer than k attempts were graded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from math import comb

from replicate.core import ResultRow

SUCCESS = 1.0


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """The unbiased pass@k of n attempts with c successes; None when n < k."""
    if k < 1 or n < k:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


@dataclass(frozen=True)
class TaskStats:
    task_id: str
    attempts: int  # graded attempts (infra errors left out)
    successes: int
    mean_reward: float | None
    pass_at: tuple[float | None, ...]  # pass@1 .. pass@K


def task_stats(rows: Iterable[ResultRow], samples: int) -> tuple[TaskStats, ...]:
    """One entry per task, in the order the rows name the tasks."""
    rewards: dict[str, list[float]] = {}
    for row in rows:
        found = rewards.setdefault(row.task_id, [])
        if row.reward is not None:
            found.append(row.reward)
    return tuple(_one(task_id, found, samples) for task_id, found in rewards.items())


def _one(task_id: str, rewards: list[float], samples: int) -> TaskStats:
    n = len(rewards)
    c = sum(reward >= SUCCESS for reward in rewards)
    return TaskStats(
        task_id=task_id,
        attempts=n,
        successes=c,
        mean_reward=sum(rewards) / n if n else None,
        pass_at=tuple(pass_at_k(n, c, k) for k in range(1, samples + 1)),
    )


def overall_pass_at(stats: Iterable[TaskStats], samples: int) -> tuple[float | None, ...]:
    """pass@k averaged over the tasks where it is defined (None where it is nowhere)."""
    out: list[float | None] = []
    found = list(stats)
    for index in range(samples):
        values = [s.pass_at[index] for s in found if s.pass_at[index] is not None]
        out.append(sum(v for v in values if v is not None) / len(values) if values else None)
    return tuple(out)
