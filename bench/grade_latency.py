"""Grade latency: one function task, the same 500 hidden inputs, distinct candidates, three ways.

  floor  — the same runner in a plain subprocess, no isolation (candidate trees made beforehand)
  local  — the bubblewrap jail, warm (started before the candidate arrives; one jail per candidate)
  docker — a container per grade (cold)

Figures are printed as ratios against the floor measured in the same run (these machines are
noisy). Throughput: distinct candidates graded per second with 2 workers on warm local jails.

    python bench/grade_latency.py [--candidates 40] [--task samplelib.text.slugify]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this checkout's code, whatever else is installed

from replicate.batch import Batch, LoadedTask  # noqa: E402
from replicate.cache import cache_root  # noqa: E402
from replicate.core import CallInput  # noqa: E402
from replicate.grading import original_source  # noqa: E402
from replicate.jail import (  # noqa: E402
    JailRun,
    RepoContext,
    SandboxUnavailable,
    WarmPool,
    WarmStart,
    context_for,
    get_sandbox,
    run_calls,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
INPUTS = 500


def hidden_inputs(task: LoadedTask) -> list[CallInput]:
    """The task's inputs repeated to 500 (distinct indices, the same calls)."""
    base = list(task.inputs)
    return [base[n % len(base)].model_copy(update={"index": n}) for n in range(INPUTS)]


def candidate(task: LoadedTask, n: int) -> bytes:
    """The reference file made distinct per candidate, so no cache could answer."""
    return original_source(task) + f"\n_BENCH_CANDIDATE = {n}\n".encode()


def check(run: JailRun, label: str) -> None:
    if len(run.parsed.outcomes) != INPUTS:
        sys.exit(f"{label}: {len(run.parsed.outcomes)} of {INPUTS} outcomes; {run.result.stderr!r}")


def timed(
    grades: int, one: Callable[[int], JailRun], label: str, between: Callable[[], None]
) -> list[float]:
    times = []
    for n in range(grades):
        between()
        started = time.perf_counter()
        check(one(n), label)
        times.append(time.perf_counter() - started)
    return times


def floor(task: LoadedTask, ctx: RepoContext, inputs: list[CallInput], grades: int) -> list[float]:
    plain = get_sandbox("plain")
    scratch = Path(tempfile.mkdtemp(prefix="bench-floor-"))
    trees = []
    for n in range(grades):  # not timed: the floor is the process, not the copying
        tree = scratch / f"t{n}"
        shutil.copytree(ctx.tree, tree, symlinks=True)
        (tree / task.hidden.target.path).unlink()
        (tree / task.hidden.target.path).write_bytes(candidate(task, n))
        replace(ctx, tree=tree).bytecode(tree, task.hidden.target)  # compiled, as the jail's is
        trees.append(tree)
    settings = task.hidden.grading

    def one(n: int) -> JailRun:
        return run_calls(replace(ctx, tree=trees[n]), task.hidden.target, inputs, plain, settings)

    try:
        return timed(grades, one, "floor", lambda: None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def local_warm(
    task: LoadedTask, ctx: RepoContext, inputs: list[CallInput], grades: int
) -> list[float]:
    sandbox = get_sandbox("local")
    assert isinstance(sandbox, WarmStart)
    settings, target = task.hidden.grading, task.hidden.target
    with WarmPool(sandbox, per_key=1) as pool:
        run = lambda n: run_calls(  # noqa: E731
            ctx, target, inputs, sandbox, settings, override=candidate(task, n), pool=pool
        )
        run(-1)  # the first jail of a file is cold; the pool then keeps one ready
        return timed(grades, run, "local", lambda: time.sleep(0.15))


def docker_cold(
    task: LoadedTask, ctx: RepoContext, inputs: list[CallInput], grades: int
) -> list[float] | None:
    try:
        sandbox = get_sandbox("docker")
    except SandboxUnavailable as exc:
        print(f"docker: skipped ({exc})")
        return None
    settings, target = task.hidden.grading, task.hidden.target
    run = lambda n: run_calls(ctx, target, inputs, sandbox, settings, override=candidate(task, n))  # noqa: E731
    return timed(grades, run, "docker", lambda: None)


def throughput(task: LoadedTask, ctx: RepoContext, inputs: list[CallInput], grades: int) -> float:
    sandbox = get_sandbox("local")
    assert isinstance(sandbox, WarmStart)
    settings, target = task.hidden.grading, task.hidden.target
    with WarmPool(sandbox, per_key=2) as pool, ThreadPoolExecutor(max_workers=2) as workers:
        started = time.perf_counter()
        runs = list(
            workers.map(
                lambda n: run_calls(
                    ctx, target, inputs, sandbox, settings, override=candidate(task, n), pool=pool
                ),
                range(grades),
            )
        )
        elapsed = time.perf_counter() - started
    for run in runs:
        check(run, "throughput")
    return grades / elapsed


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def report(name: str, values: list[float], base: list[float]) -> None:
    med, tail = statistics.median(values), p95(values)
    ratio = med / statistics.median(base)
    ratio95 = tail / p95(base)
    print(
        f"{name:7} median {med * 1000:7.1f} ms  p95 {tail * 1000:7.1f} ms  "
        f"= {ratio:5.2f}x floor (p95 {ratio95:5.2f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=40)
    parser.add_argument("--task", default="samplelib.text.slugify")
    parser.add_argument("--tasks", type=Path, default=REPO_ROOT, help="batch (default: bundled)")
    args = parser.parse_args()
    batch = Batch.open(args.tasks)
    task = batch.load(args.task)
    ctx = context_for(task.repo, cache_root())
    inputs = hidden_inputs(task)
    print(f"task {task.spec.source.symbol}: {INPUTS} inputs, {args.candidates} distinct candidates")
    base = floor(task, ctx, inputs, args.candidates)
    warm = local_warm(task, ctx, inputs, args.candidates)
    docker = docker_cold(task, ctx, inputs, max(10, args.candidates // 4))
    report("floor", base, base)
    report("local", warm, base)
    if docker is not None:
        report("docker", docker, base)
        speedup = statistics.median(docker) / statistics.median(warm)
        print(f"local (warm) is {speedup:.1f}x faster than a container per grade")
    rate = throughput(task, ctx, inputs, args.candidates)
    print(f"throughput: {rate:.1f} graded candidates/s with 2 workers on warm local jails")


if __name__ == "__main__":
    main()
