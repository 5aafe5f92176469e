"""Scoring agents on task batches (`replicate run`)."""

from __future__ import annotations

from replicate.scoring.batch_run import RunOptions, RunSummary, run_batch
from replicate.scoring.report import write_report
from replicate.scoring.results import TORN_FILE
from replicate.scoring.solve import write_solve_rates
from replicate.scoring.stats import TaskStats, overall_pass_at, task_stats

__all__ = [
    "TORN_FILE",
    "RunOptions",
    "RunSummary",
    "TaskStats",
    "overall_pass_at",
    "run_batch",
    "task_stats",
    "write_report",
    "write_solve_rates",
]
