"""How long one grade takes in candidates' sessions against jails of their own, same run.

`run_throughput.py` times whole `replicate run`s, where the agent's own sandbox, the workspace
and the other worker weigh on every figure.  This times `grade_text` alone, one grade at a time
in this process: for each of the first `--limit` tasks of a batch, the original file (earns 1.0,
so it is run twice) and the stub (earns 0, run once), in sessions (warm: `CandidateSessions`,
started and used once per task before timing) and cold (a jail per run), alternately, `--rounds`
times.  Printed per candidate kind: the median and mean ms of each mode and cold/warm; the
verdicts of both modes must agree.

    python bench/session_grades.py [--tasks DIR] [--limit 24] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from replicate.batch import Batch, LoadedTask  # noqa: E402
from replicate.cache import cache_root  # noqa: E402
from replicate.grading import grade_text, original_source  # noqa: E402
from replicate.grading.grader import stubbed_source  # noqa: E402
from replicate.jail import CandidateSessions, Jail, RepoContext, context_for, get_sandbox  # noqa: E402

KINDS = {"original": original_source, "stub": stubbed_source}


def _grade(task: LoadedTask, kind: str, jail: Jail) -> tuple[float, tuple[object, ...]]:
    started = time.perf_counter()
    verdict = grade_text(task, KINDS[kind](task).decode(), jail)
    return time.perf_counter() - started, (verdict.reward, verdict.reason)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=REPO_ROOT, help="batch (default: bundled)")
    parser.add_argument("--limit", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    batch = Batch.open(args.tasks)
    tasks = [batch.load(ident) for ident in batch.select((), args.limit)]
    sandbox = get_sandbox("local")
    contexts: dict[str, RepoContext] = {}
    times: dict[tuple[str, str], list[float]] = {}
    verdicts: dict[tuple[str, str, str], tuple[object, ...]] = {}
    with CandidateSessions(sandbox, max_idle=4 * len(tasks)) as forks:
        jails = {}
        for task in tasks:
            key = task.hidden.repo_dir
            ctx = contexts.setdefault(key, context_for(task.repo, cache_root()))
            forked = Jail(ctx, sandbox, candidates=forks)
            jails[task.id] = {"warm": forked, "cold": forked.cold()}
            for kind in KINDS:  # the sessions started and used once: timing starts warm
                _grade(task, kind, forked)
        for _ in range(args.rounds):
            for task in tasks:
                for kind in KINDS:
                    for mode in ("cold", "warm"):
                        took, verdict = _grade(task, kind, jails[task.id][mode])
                        times.setdefault((kind, mode), []).append(took)
                        if verdicts.setdefault((task.id, kind, mode), verdict) != verdict:
                            sys.exit(f"{task.id} {kind} {mode}: the verdict changed between rounds")
    for task in tasks:
        for kind in KINDS:
            if verdicts[(task.id, kind, "cold")] != verdicts[(task.id, kind, "warm")]:
                sys.exit(f"{task.id} {kind}: warm and cold verdicts differ")
    print(f"{len(tasks)} tasks, {args.rounds} rounds, verdicts alike both ways")
    for kind in KINDS:
        cold_s, warm_s = times[(kind, "cold")], times[(kind, "warm")]
        line = [f"{kind:8}"]
        for name, figure in (("median", statistics.median), ("mean", statistics.mean)):
            c, w = figure(cold_s) * 1000, figure(warm_s) * 1000
            line.append(f"{name} cold {c:6.1f} ms  warm {w:5.1f} ms  cold/warm {c / w:4.2f}x")
        print("  ".join(line))


if __name__ == "__main__":
    main()
