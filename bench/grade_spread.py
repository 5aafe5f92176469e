"""Grades spread over a batch's files in no order, as a trainer's reward calls come: the server's
and reward functions' `Grader`, cold against warm with the idle sessions it keeps now and with
the 8 it kept before, in the same run.

Every task of the batch gets a distinct candidate (its original file plus a unique comment),
`--rounds` times, the whole list shuffled with a fixed seed, `--concurrency` at a time.
Printed per mode: grades per second, the median grade, sessions started.

    python bench/grade_spread.py [--tasks DIR] [--rounds 2] [--concurrency 2]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from replicate.cli.main import collect_less_often  # noqa: E402
from replicate.grading import original_source  # noqa: E402
from replicate.integrations import grading  # noqa: E402
from replicate.integrations.grading import Grader  # noqa: E402

OLD_IDLE = 8


def one_mode(args: argparse.Namespace, warm: bool, idle: int | None) -> tuple[float, float, int]:
    """Grades per second, median grade (s) and sessions started, for one way of grading."""
    chosen = grading.idle_sessions
    if idle is not None:
        grading.idle_sessions = lambda floor: idle  # type: ignore[assignment]
    try:
        grader = Grader(args.tasks, warm=warm, warm_per_key=args.concurrency)
    finally:
        grading.idle_sessions = chosen  # type: ignore[assignment]
    try:
        ids = list(grader.batch.select((), None))
        for ident in ids:
            grader.context(grader.task(ident))  # environments built before the clock starts
        order = [i for _ in range(args.rounds) for i in random.Random(1).sample(ids, len(ids))]
        count = iter(range(len(order)))

        def one(ident: str) -> float:
            text = original_source(grader.task(ident)).decode() + f"\n# {next(count)}\n"
            started = time.perf_counter()
            grader.grade(ident, text)
            return time.perf_counter() - started

        began = time.perf_counter()
        with ThreadPoolExecutor(args.concurrency) as pool:
            times = list(pool.map(one, order))
        wall = time.perf_counter() - began
        sessions = grader.forks.started if grader.forks is not None else 0
        return len(order) / wall, statistics.median(times), sessions
    finally:
        grader.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=REPO_ROOT, help="batch (default: bundled)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    collect_less_often()  # as `replicate serve` sets its process up
    modes = {
        "cold": (False, None),
        f"warm, {OLD_IDLE} idle": (True, OLD_IDLE),
        "warm": (True, None),
    }
    found = {name: one_mode(args, warm, idle) for name, (warm, idle) in modes.items()}
    cold = found["cold"][0]
    for name, (rate, median, sessions) in found.items():
        print(
            f"{name:12} {rate:6.1f} grades/s  median {1000 * median:6.1f} ms  "
            f"sessions started {sessions:4d}  x cold {rate / cold:.2f}"
        )


if __name__ == "__main__":
    main()
