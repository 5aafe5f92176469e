"""What auditing each task as it is minted costs, against one audit of all tasks at the end.

`gen` now audits each task for leaks as soon as it is minted (so it can be written at once). The
baseline, measured in the same run, is what `gen` did before: one audit of every task together
at the end. Also timed: a per-task audit that walks the visible files again for each task (what
per-task auditing would cost without the index `LeakAudit` keeps), on the first `--naive` tasks,
and the per-task audit of a later gen, with the fingerprints an earlier gen kept in the cache.

    python bench/audit_per_task.py [--tasks DIR] [--naive 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this checkout's code, whatever else is installed

from replicate.batch import Batch  # noqa: E402
from replicate.cache import cache_root  # noqa: E402
from replicate.gen import LeakAudit, audit_leaks, visible_roots  # noqa: E402
from replicate.jail import context_for  # noqa: E402


def _timed(work: Callable[[], object]) -> tuple[float, float]:
    """Wall seconds and this process's CPU seconds of `work` (the audit is one thread of CPU
    work; on a shared machine its CPU time is the steadier figure)."""
    wall, cpu = time.monotonic(), time.process_time()
    work()
    return time.monotonic() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--naive", type=int, default=5)
    args = parser.parse_args()
    batch = Batch.open(args.tasks)
    tasks = [batch.load(i) for i in batch.ids]
    repo = tasks[0].repo
    roots = visible_roots(repo.tree, context_for(repo, cache_root()).site_packages)
    together: dict[str, object] = {}
    each: dict[str, object] = {}
    checker = LeakAudit(roots)

    def per_task() -> None:
        for task in tasks:
            each.update(checker.leaks([task]))

    def naive() -> None:
        for task in tasks[: args.naive]:
            audit_leaks([task], roots)

    kept: dict[str, object] = {}

    def later_gen(cache: Path) -> None:
        checker = LeakAudit(roots, cache)
        for task in tasks:
            kept.update(checker.leaks([task]))
        checker.close()

    rows = {
        "all at the end (baseline)": _timed(lambda: together.update(audit_leaks(tasks, roots))),
        "each as minted, indexed": _timed(per_task),
    }
    with tempfile.TemporaryDirectory() as cache:
        later_gen(Path(cache))  # the earlier gen, which fills the cache
        rows["each as minted, a later gen"] = _timed(lambda: later_gen(Path(cache)))
    sample = max(1, min(args.naive, len(tasks)))
    wall, cpu = _timed(naive)
    rows["each as minted, walked anew*"] = (wall / sample * len(tasks), cpu / sample * len(tasks))
    assert each == together, "the per-task audit found other leaks than the audit at the end"
    assert kept == together, "the audit with kept fingerprints found other leaks"
    base_wall, base_cpu = rows["all at the end (baseline)"]
    print(f"{len(tasks)} tasks, {len(together)} leaked")
    print(f"{'':30} {'wall s':>8} {'ratio':>6} {'cpu s':>8} {'ratio':>6}")
    for name, (wall, cpu) in rows.items():
        print(f"{name:30} {wall:8.1f} {wall / base_wall:5.2f}x {cpu:8.1f} {cpu / base_cpu:5.2f}x")
    print(f"* extrapolated from the first {sample} tasks")


if __name__ == "__main__":
    main()
