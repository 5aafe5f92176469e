"""pass@k and the per-task statistics of a run with samples."""

from __future__ import annotations

from math import comb

import pytest

from replicate.core.records import ResultRow, Verdict
from replicate.scoring.stats import overall_pass_at, pass_at_k, task_stats


def row(task: str, sample: int, reward: float | None) -> ResultRow:
    status = "graded" if reward is not None else "infra_error"
    verdict = Verdict(task_id=task, reward=reward, status=status, reason="", grader_version="t")
    return ResultRow(
        task_id=task,
        sample=sample,
        reward=reward,
        status=status,
        reason="",
        agent_status="ok",
        agent_exit_code=0,
        duration_s=0.0,
        verdict=verdict,
    )


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (4, 1, 1, 0.25),
        (4, 0, 2, 0.0),
        (4, 4, 3, 1.0),
        (3, 2, 2, 1.0),
        (5, 2, 2, 0.7),
        (2, 1, 3, None),
    ],
)
def test_pass_at_k_is_the_unbiased_estimator(
    n: int, c: int, k: int, expected: float | None
) -> None:
    found = pass_at_k(n, c, k)
    assert found is None if expected is None else found == pytest.approx(expected)
    if expected is not None and n - c >= k:
        assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k))


def test_task_stats_count_successes_and_leave_infra_errors_out() -> None:
    rows = [row("a", 0, 1.0), row("a", 1, 0.5), row("a", 2, None), row("b", 0, 0.0)]
    rows += [row("b", 1, 0.0), row("b", 2, 1.0)]
    a, b = task_stats(rows, 3)
    assert (a.task_id, a.attempts, a.successes, a.mean_reward) == ("a", 2, 1, 0.75)
    assert a.pass_at == (0.5, 1.0, None)
    assert (b.attempts, b.successes) == (3, 1)
    assert b.pass_at == pytest.approx((1 / 3, 2 / 3, 1.0))
    overall = overall_pass_at((a, b), 3)
    assert overall[:2] == pytest.approx(((0.5 + 1 / 3) / 2, (1.0 + 2 / 3) / 2))
    assert overall[2] == 1.0
