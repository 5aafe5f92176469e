"""Grader strength on real libraries: mutant kill rates of our grader and of the repo's own tests.

Per library (a pinned PyPI sdist made into a git repository, minted with `replicate gen` as it
stands, BEFORE any strength filtering), for a sample of tasks spread over the library's modules:

- the same mutants of each reference (`replicate.gen.mutants`) are graded by our grader on
  the task's hidden inputs, and by the repository's own tests that exercised the target
  (`replicate.grading.repo_tests`, pristine tree + mutant file; a mutant is killed when fewer
  tests pass than with the pristine file);
- every mutant our grader lets through is hunted with up to `--search` (10,000) generated inputs,
  in batches of fresh seeds; one that none tells apart from the reference is reported as likely
  equivalent, and the median kill rate is given without them too;
- yield: the gen-time assessment (`replicate.gen.strength.assess`, as `gen` would run it) on the
  same tasks: how many are at or above `--threshold` before and after inputs that kill survivors
  are added.

Medians are per task; "pooled" rates count all mutants of the sampled tasks together.

    python bench/strength.py [--lib NAME==VERSION]... [--tasks 25] [--mutants 15] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this checkout's code, whatever else is installed

from replicate.batch import Batch, LoadedTask  # noqa: E402
from replicate.cache import cache_root  # noqa: E402
from replicate.core import CallInput  # noqa: E402
from replicate.gen import (  # noqa: E402
    MutantRun,
    Reference,
    assess,
    mutant_settings,
    reference_run,
    run_mutants,
    search,
    task_mutants,
)
from replicate.grading import node_ids, run_repo_tests  # noqa: E402
from replicate.inputs import Budget  # noqa: E402
from replicate.jail import Jail, RepoContext, Sandbox, context_for, get_sandbox  # noqa: E402

LIBS = ("more-itertools==10.5.0", "boltons==24.1.0", "sortedcontainers==2.4.0")
GIT = ("git", "-c", "safe.directory=*", "-c", "user.name=bench", "-c", "user.email=b@localhost")
BATCH = 1000  # generated inputs per search batch
# a survivor is "likely equivalent" only when the search tried at least this many inputs on it
# (a method whose `self` cannot be varied may yield a handful: those count as unsearchable)
EQUIVALENT_AFTER = 1000
REPO_TESTS_MIN_S = 30.0  # a mutant's run of the repo's tests may take this long, or 5x pristine


@dataclass
class TaskRow:
    task: str
    symbol: str
    hidden_inputs: int
    mutants: int
    ours_killed: int
    repo_killed: int | None  # None: no test of the repo passes on the pristine tree
    repo_tests: int
    equivalent: int  # survived the whole search
    unsearchable: int  # survived, but fewer than EQUIVALENT_AFTER inputs could hunt them
    searched: int
    gen_rate_before: float  # gen-time assessment (its own, larger mutant set)
    gen_rate_after: float
    gen_added: int
    survivor_kinds: list[str] = field(default_factory=list)  # of the non-equivalent survivors
    equivalent_kinds: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ours(self) -> float:
        return self.ours_killed / self.mutants if self.mutants else 1.0

    @property
    def repo(self) -> float | None:
        if self.repo_killed is None:
            return None
        return self.repo_killed / self.mutants if self.mutants else 1.0

    @property
    def ours_without_equivalent(self) -> float:
        real = self.mutants - self.equivalent
        return self.ours_killed / real if real else 1.0


# ---------------------------------------------------------------- preparing libraries


def sdist_repo(root: Path, spec: str) -> Path:
    """Download a pinned sdist, unpack it and commit it as a fresh git repository (once)."""
    marker = root / "repo-path"
    if marker.exists():
        return Path(marker.read_text().strip())
    downloads = root / "downloads"
    pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
    subprocess.run([*pip, spec, "-d", str(downloads)], check=True, timeout=600)
    archive = next(downloads.glob("*.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(root / "src", filter="data")
    repo = next((root / "src").iterdir())
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-q", "-m", spec)):
        subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True)
    marker.write_text(str(repo))
    return repo


def mint(repo: Path, out: Path) -> float:
    """`replicate gen --no-strength` as it stands (once per work dir; the funnel is kept in
    gen.json beside the batch): its wall time."""
    saved = out.parent / "gen.json"
    if saved.exists():
        return float(json.loads(saved.read_text())["wall_s"])
    started = time.monotonic()
    cmd = [sys.executable, "-m", "replicate", "gen", "--repo", str(repo), "--out", str(out)]
    cmd += ["--no-strength"]  # measured before any strength filtering (gen filters by default)
    done = subprocess.run([*cmd, "--json"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"gen failed on {repo}: {done.stderr[-2000:]}")
    wall = time.monotonic() - started
    funnel = json.loads(done.stdout)
    saved.write_text(json.dumps({"funnel": funnel, "wall_s": wall}))
    return wall


def sample(batch: Batch, n: int) -> list[str]:
    """Up to n task ids, round-robin over the files that hold targets (deterministic)."""
    by_file: dict[str, list[str]] = {}
    for task_id in batch.ids:
        by_file.setdefault(batch.spec(task_id).source.path, []).append(task_id)
    queues = [sorted(ids) for _, ids in sorted(by_file.items())]
    picked: list[str] = []
    for row in range(max((len(q) for q in queues), default=0)):
        picked += [queue[row] for queue in queues if row < len(queue)]
    return picked[:n]


# ---------------------------------------------------------------- measuring one task


def repo_kills(
    task: LoadedTask,
    runs: Sequence[MutantRun],
    ctx: RepoContext,
    sandbox: Sandbox,
    workers: int,
) -> tuple[int | None, int]:
    """Mutants the repo's own tests kill (None when no selected test passes on the pristine
    tree), and how many tests were selected."""
    ids = node_ids(task.inputs)
    target = task.hidden.target
    started = time.monotonic()
    pristine = run_repo_tests(Jail(ctx, sandbox), target, None, ids)
    if pristine.passed == 0:
        return None, len(ids)
    # a mutant that makes a test loop fails it; no need to wait the default 300 s for that
    limit = max(REPO_TESTS_MIN_S, 5 * (time.monotonic() - started))

    def killed(run: MutantRun) -> bool:
        if run.spliced is None:
            return True
        outcome = run_repo_tests(Jail(ctx, sandbox), target, run.spliced, ids, timeout_s=limit)
        return outcome.timed_out or outcome.passed < pristine.passed

    with ThreadPoolExecutor(max_workers=workers) as threads:
        return sum(threads.map(killed, runs)), len(ids)


def hunt(
    task: LoadedTask,
    survivors: Sequence[MutantRun],
    reference: Reference,
    ctx: RepoContext,
    sandbox: Sandbox,
    limit: int,
) -> tuple[list[MutantRun], int]:
    """Survivors no generated input tells apart (up to `limit` inputs in fresh-seed batches),
    and how many distinct deterministic inputs were tried."""
    alive = list(survivors)
    seen = {i.pickle_b64 for i in task.inputs}
    tried = empty = 0
    settings = mutant_settings(task, reference.wall_s)
    start = max((i.index for i in task.inputs), default=0) + 1
    for batch in range(limit // BATCH * 3):
        if not alive or tried >= limit or empty >= 2:
            break
        budget = Budget(widened=BATCH, edge=100 if batch == 0 else 0)
        found = search(task, Jail(ctx, sandbox), reference, budget, f"bench-{batch}", start)
        start += 2 * (BATCH + 100)
        fresh: list[CallInput] = [i for i in found.inputs if i.pickle_b64 not in seen]
        fresh = fresh[: limit - tried]
        seen.update(i.pickle_b64 for i in fresh)
        empty = empty + 1 if len(fresh) < BATCH // 20 else 0
        if not fresh:
            continue
        tried += len(fresh)
        mutants = [r.mutant for r in alive]
        again = run_mutants(task, mutants, Jail(ctx, sandbox), fresh, found.expected, settings, 2)
        alive = [r for r, a in zip(alive, again, strict=True) if not a.killed]
    return alive, tried


def measure(
    task: LoadedTask,
    ctx: RepoContext,
    sandbox: Sandbox,
    args: argparse.Namespace,
) -> TaskRow | str:
    started = time.monotonic()
    reference = reference_run(task, Jail(ctx, sandbox))
    if isinstance(reference, str):
        return f"{task.id}: {reference}"
    settings = mutant_settings(task, reference.wall_s)
    found = task_mutants(task, args.mutants)
    runs = run_mutants(task, found, Jail(ctx, sandbox), task.inputs, task.expected, settings, 2)
    runs = [r for r in runs if r.status != "infra"]
    repo_killed, tests = repo_kills(task, runs, ctx, sandbox, args.workers)
    survivors = [r for r in runs if not r.killed]
    alive, searched = hunt(task, survivors, reference, ctx, sandbox, args.search)
    equivalent = alive if searched >= EQUIVALENT_AFTER else []
    gen = assess(task, Jail(ctx, sandbox), threshold=args.threshold, limit=args.mutants, workers=2)
    if isinstance(gen, str):
        return f"{task.id}: {gen}"
    killed_later = [r for r in survivors if r not in alive]
    return TaskRow(
        task=task.id,
        symbol=task.hidden.source.symbol,
        hidden_inputs=len(task.inputs),
        mutants=len(runs),
        ours_killed=len(runs) - len(survivors),
        repo_killed=repo_killed,
        repo_tests=tests,
        equivalent=len(equivalent),
        unsearchable=len(alive) - len(equivalent),
        searched=searched,
        gen_rate_before=_rate(gen.strength.killed_before, gen.strength.mutants),
        gen_rate_after=gen.strength.kill_rate,
        gen_added=gen.strength.added_inputs,
        survivor_kinds=[_kind(r) for r in killed_later + [r for r in alive if r not in equivalent]],
        equivalent_kinds=[_kind(r) for r in equivalent],
        seconds=round(time.monotonic() - started, 1),
    )


def _rate(killed: int, mutants: int) -> float:
    return killed / mutants if mutants else 1.0


def _kind(run: MutantRun) -> str:
    operator = run.mutant.operator
    return "swap" if operator.startswith("swap") else operator.split(" ")[0]


# ---------------------------------------------------------------- one library


@dataclass
class LibraryResult:
    library: str
    minted: int
    sampled: int
    gen_wall_s: float
    bench_wall_s: float
    median_ours: float
    median_repo: float | None
    median_ours_without_equivalent: float
    pooled_ours: float  # all mutants of all sampled tasks together
    pooled_ours_where_repo: float  # the same, on the tasks the repo's tests could be run on
    pooled_repo: float | None
    mutants: int
    likely_equivalent: int
    unsearchable: int
    repo_measured: int  # tasks whose selected tests pass on the pristine tree
    at_threshold_before: int
    at_threshold_after: int
    threshold: float
    survivor_kinds: dict[str, int]
    equivalent_kinds: dict[str, int]
    rows: list[TaskRow]
    errors: list[str]


def bench_library(spec: str, args: argparse.Namespace, sandbox: Sandbox) -> LibraryResult:
    root = Path(args.work) / spec.replace("==", "-")
    root.mkdir(parents=True, exist_ok=True)
    repo = sdist_repo(root, spec)
    gen_wall = mint(repo, root / "batch")
    started = time.monotonic()
    batch = Batch.open(root / "batch")
    ids = sample(batch, args.tasks)
    rows: list[TaskRow] = []
    errors: list[str] = []
    ctx: RepoContext | None = None
    for n, task_id in enumerate(ids):
        task = batch.load(task_id)
        ctx = ctx or context_for(task.repo, cache_root())
        row = measure(task, ctx, sandbox, args)
        if isinstance(row, str):
            errors.append(row)
            continue
        rows.append(row)
        print(
            f"  {spec} [{n + 1}/{len(ids)}] {row.symbol}: ours {row.ours:.2f} repo {row.repo} "
            f"equiv {row.equivalent} ({row.seconds:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
    return _summary(spec, len(batch.ids), len(ids), gen_wall, started, rows, errors, args)


def _summary(
    spec: str,
    minted: int,
    sampled: int,
    gen_wall: float,
    started: float,
    rows: list[TaskRow],
    errors: list[str],
    args: argparse.Namespace,
) -> LibraryResult:
    repo_rates = [r.repo for r in rows if r.repo is not None]
    kinds: Counter[str] = Counter(k for r in rows for k in r.survivor_kinds)
    equivalent: Counter[str] = Counter(k for r in rows for k in r.equivalent_kinds)
    return LibraryResult(
        library=spec,
        minted=minted,
        sampled=sampled,
        gen_wall_s=round(gen_wall, 1),
        bench_wall_s=round(time.monotonic() - started, 1),
        median_ours=_median([r.ours for r in rows]),
        median_repo=_median(repo_rates) if repo_rates else None,
        median_ours_without_equivalent=_median([r.ours_without_equivalent for r in rows]),
        pooled_ours=_pooled([(r.ours_killed, r.mutants) for r in rows]),
        pooled_ours_where_repo=_pooled(
            [(r.ours_killed, r.mutants) for r in rows if r.repo_killed is not None]
        ),
        pooled_repo=_pooled([(r.repo_killed, r.mutants) for r in rows if r.repo_killed is not None])
        if repo_rates
        else None,
        mutants=sum(r.mutants for r in rows),
        likely_equivalent=sum(r.equivalent for r in rows),
        unsearchable=sum(r.unsearchable for r in rows),
        repo_measured=len(repo_rates),
        at_threshold_before=sum(r.gen_rate_before >= args.threshold for r in rows),
        at_threshold_after=sum(r.gen_rate_after >= args.threshold for r in rows),
        threshold=args.threshold,
        survivor_kinds=dict(kinds.most_common()),
        equivalent_kinds=dict(equivalent.most_common()),
        rows=rows,
        errors=errors,
    )


def _pooled(pairs: Sequence[tuple[int, int]]) -> float:
    total = sum(n for _, n in pairs)
    return round(sum(k for k, _ in pairs) / total, 3) if total else 1.0


def _median(values: Sequence[float]) -> float:
    return round(statistics.median(values), 3) if values else 1.0


# ---------------------------------------------------------------- output


def table(results: Sequence[LibraryResult]) -> Table:
    out = Table(title="Mutant kill rate (median per task), before strength filtering")
    for name in ("library", "tasks (sampled/minted)", "mutants", "ours", "repo tests"):
        out.add_column(name, justify="right" if name != "library" else "left")
    for name in ("likely equiv.", "ours w/o equiv.", "unsearchable", "pooled ours/repo"):
        out.add_column(name, justify="right")
    for name in ("yield before->after",):
        out.add_column(name, justify="right")
    for r in results:
        repo = "n/a" if r.median_repo is None else f"{r.median_repo:.2f} ({r.repo_measured})"
        out.add_row(
            r.library,
            f"{len(r.rows)}/{r.minted}",
            str(r.mutants),
            f"{r.median_ours:.2f}",
            repo,
            str(r.likely_equivalent),
            f"{r.median_ours_without_equivalent:.2f}",
            str(r.unsearchable),
            f"{r.pooled_ours:.2f} ({r.pooled_ours_where_repo:.2f}/"
            + ("n/a" if r.pooled_repo is None else f"{r.pooled_repo:.2f}")
            + ")",
            f"{r.at_threshold_before} -> {r.at_threshold_after} of {len(r.rows)}"
            f" (>= {r.threshold:.2f})",
        )
    return out


def _payload(results: Sequence[LibraryResult]) -> list[dict[str, object]]:
    out = []
    for r in results:
        data = asdict(r)
        data["rows"] = [{**asdict(row), "ours": row.ours, "repo": row.repo} for row in r.rows]
        out.append(data)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--lib", action="append", help="NAME==VERSION (repeatable)")
    parser.add_argument("--tasks", type=int, default=25, help="tasks sampled per library")
    parser.add_argument("--mutants", type=int, default=15, help="mutants per task")
    parser.add_argument("--search", type=int, default=10_000, help="inputs hunting a survivor")
    parser.add_argument("--threshold", type=float, default=0.5, help="kill rate for the yield")
    parser.add_argument("--workers", type=int, default=2, help="repo-test runs at a time")
    parser.add_argument("--work", default=os.environ.get("STRENGTH_WORK", "/tmp/strength-bench"))
    parser.add_argument("--parallel", type=int, default=1, help="libraries at a time")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    args.lib = args.lib or list(LIBS)
    sandbox = get_sandbox("local")
    with ThreadPoolExecutor(max_workers=max(1, args.parallel)) as libraries:
        results = list(libraries.map(lambda spec: bench_library(spec, args, sandbox), args.lib))
    if args.json:
        print(json.dumps(_payload(results), indent=2))
    console = Console(width=180, stderr=args.json)
    console.print(table(results))
    for r in results:
        console.print(
            f"{r.library}: gen {r.gen_wall_s:.0f} s, bench {r.bench_wall_s:.0f} s; "
            f"survivors killed only by the search, by operator: {r.survivor_kinds}; "
            f"likely equivalent by operator: {r.equivalent_kinds}"
        )
        for error in r.errors:
            console.print(f"  error: {error}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
