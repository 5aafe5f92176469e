"""The solve rate a run observed, written next to each task's difficulty in the batch it ran on
(`replicate report RUN_DIR --write-solve-rate`), for choosing tasks by it later
(`--max-solve-rate`).  Per task: the graded attempts (infrastructure errors left out), those that
earned 1.0, their share (the solve rate) and the mean reward."""

from __future__ import annotations

from pathlib import Path

from replicate.batch import DIFFICULTY, Batch, SolveRate, record_solve_rates
from replicate.errors import ReplicateError
from replicate.scoring.rundata import RunData
from replicate.scoring.stats import task_stats


def solve_rates(run: RunData) -> dict[str, SolveRate]:
    """Task id -> what the run observed, for the tasks it graded at least once."""
    return {
        stats.task_id: SolveRate(
            attempts=stats.attempts,
            successes=stats.successes,
            pass_rate=round(stats.successes / stats.attempts, 4),
            mean_reward=None if stats.mean_reward is None else round(stats.mean_reward, 4),
            run=str(run.path),
            agent=run.agent,
        )
        for stats in task_stats(run.rows, run.samples)
        if stats.attempts
    }


def write_solve_rates(run: RunData) -> tuple[int, Path]:
    """Record the run's solve rates in its batch; how many tasks, and the file written."""
    if not run.tasks_dir:
        raise ReplicateError(f"{run.path} does not say which batch it ran on (no run.json)")
    batch = Batch.open(run.tasks_dir, verify=False)
    rates = solve_rates(run)
    if not rates:
        raise ReplicateError(f"{run.path} graded no attempt: no solve rate to record")
    return record_solve_rates(batch.root, rates), batch.root / DIFFICULTY
