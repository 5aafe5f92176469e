"""How fast `replicate gen` mints, with its speed-ups and without them (`--cold`), in one run.

```bash
python bench/gen_speed.py [--lib NAME==VERSION]... [--no-samplelib] [--rounds 1] [--keep]
                          [--by-kinds]
```

Per library (the bundled sample library always; pinned PyPI sdists made into git repositories
with `--lib`, as the end-to-end tests fetch them), each round mints it twice into fresh
directories, with the speed-ups and with `--cold`, each gen in its own process (as the CLI runs
it).  Printed per mode: wall time per stage, jail processes started (cold runs, warm
starts and sessions, by what started them), program runs (a cold run, a warm slot's run or a
session's child each) and their mean ms, CPU seconds of the whole process tree
(when a cpuacct cgroup can be made) and of gen's own process (its Python, one interpreter
lock: near the wall time, it is what bounds the gen), tasks per minute, and the cold/fast
ratios; and whether both modes wrote the same tasks (as the bundled-batch test compares
them: byte for byte but for the timing limits measured at gen time).

With `--by-kinds`, the two mintings of a round are instead both with the speed-ups: one of
function and method tasks only (gen's default), one of every kind gen mints (`MINTED_KINDS` of
the code it runs: class, and module once gen mints it); printed: the stages, the tasks of each
kind, and the wall time of all kinds against function and method only, as a ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SAMPLELIB = ROOT / "corpus" / "samplelib"
# what started a jail, by the innermost of these functions on the stack (first match wins)
STAGES = (
    ("run_series", "sessions for mutants"),
    ("_session", "sessions of a target"),
    ("_reference_misses", "reference re-grade"),
    ("separating", "separating search"),
    ("_hunt", "survivor hunt"),
    ("confirmed", "survivor confirm"),
    ("search", "survivor search"),
    ("reference_run", "strength reference"),
    ("run_mutants", "mutants"),
    ("baseline", "baselines"),
    ("_generate", "golden, generated"),
    ("golden", "golden"),
    ("run_harvest", "harvest"),
)


@dataclass
class Tally:
    """Jail processes started, by stage, and how long their runs took."""

    starts: Counter[str] = field(default_factory=Counter)
    run_s: list[float] = field(default_factory=list)
    runs: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)
    inside: threading.local = field(default_factory=threading.local)

    def start(self, stage: str) -> None:
        with self.lock:
            self.starts[stage] += 1

    def ran(self, seconds: float, count: int = 1) -> None:
        """`count` program runs that took `seconds` in all."""
        with self.lock:
            self.run_s += [seconds / count] * count
            self.runs[_stage()] += count


def _stage() -> str:
    names = {frame.name for frame in traceback.extract_stack()}
    found = next((label for name, label in STAGES if name in names), None)
    if found == "golden":
        return f"golden, seed {_golden_seed()}"
    return found or "warm start (background)"


def _golden_seed() -> object:
    frame = sys._getframe()
    while frame is not None and frame.f_code.co_name != "run_resuming":
        frame = frame.f_back  # type: ignore[assignment]
    return frame.f_locals.get("seed") if frame is not None else "?"


def _instrument(tally: Tally) -> None:
    """Count every jail the local sandbox starts and time every program run (cold, a warm
    slot's, or a session's child)."""
    from replicate.jail import WarmJail
    from replicate.jail.session import Session
    from replicate.sandbox.bwrap import BwrapSandbox  # a backend: loaded when chosen

    run, start, slot_run = BwrapSandbox.run, BwrapSandbox.start, WarmJail.run
    run_all = Session.run_all

    def counted_run(self: Any, request: Any) -> Any:
        tally.start(_stage())
        tally.inside.cold = True
        began = time.monotonic()
        try:
            return run(self, request)
        finally:
            tally.inside.cold = False
            tally.ran(time.monotonic() - began)

    def counted_start(self: Any, request: Any) -> Any:
        if not getattr(tally.inside, "cold", False):
            stage = _stage()
            tally.start(stage if stage.startswith("sessions") else f"{stage} (warm)")
        return start(self, request)

    def timed_slot(self: Any, *args: Any, **kwargs: Any) -> Any:
        began = time.monotonic()
        try:
            return slot_run(self, *args, **kwargs)
        finally:
            tally.ran(time.monotonic() - began)

    def timed_session(self: Any, inputs: Any, settings: Any, programs: Any, **kw: Any) -> Any:
        began = time.monotonic()
        try:
            return run_all(self, inputs, settings, programs, **kw)
        finally:
            tally.ran(time.monotonic() - began, max(len(programs), 1))

    Session.run_all = timed_session  # type: ignore[method-assign]
    BwrapSandbox.run = counted_run  # type: ignore[method-assign]
    BwrapSandbox.start = counted_start  # type: ignore[method-assign]
    WarmJail.run = timed_slot  # type: ignore[method-assign]


class StageClock:
    """The gen's progress stages, timed."""

    def __init__(self) -> None:
        self.current: str | None = None
        self.since = time.monotonic()
        self.seconds: dict[str, float] = {}

    def stage(self, description: str, total: int | None = None) -> None:
        now = time.monotonic()
        if self.current is not None:
            self.seconds[self.current] = self.seconds.get(self.current, 0.0) + now - self.since
        self.current, self.since = description, now

    def tasks(self, n: int) -> None:
        """Tasks minted so far (the progress protocol's; not timed)."""

    def advance(self, n: int = 1) -> None:
        return None


@contextlib.contextmanager
def cpu_clock() -> Iterator[list[float]]:
    """CPU seconds of this process and everything it starts (a cpuacct cgroup of its own);
    the list stays empty where no such cgroup can be made."""
    found: list[float] = []
    base = Path("/sys/fs/cgroup/cpuacct")
    group = base / f"replicate-bench-{os.getpid()}"
    try:
        group.mkdir()
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        yield found
        return
    try:
        yield found
        found.append(int((group / "cpuacct.usage").read_text()) / 1e9)
    finally:
        with contextlib.suppress(OSError):
            (base / "cgroup.procs").write_text(str(os.getpid()))
            group.rmdir()


def one_gen(
    repo: str, out: Path, workers: int, cold: bool, kinds: str | None = None
) -> dict[str, Any]:
    """Mint once, in this process, instrumented (the `--one` mode), with the process set up as
    `replicate gen` sets up its own; `kinds`: as `gen --kinds` (None: gen's default)."""
    sys.path.insert(0, str(ROOT))
    from replicate.gen import GenOptions, mint

    asked: dict[str, Any] = {}
    if kinds is not None:
        from replicate.gen import parse_kinds

        asked["kinds"] = parse_kinds(kinds)

    with contextlib.suppress(ImportError):  # as the CLI's `main` does, where the code has it
        from replicate.cli.main import collect_less_often

        collect_less_often()
    tally, clock = Tally(), StageClock()
    _instrument(tally)
    with cpu_clock() as cpu:
        started, own = time.monotonic(), _own_cpu_s()
        report = mint(GenOptions(repo=repo, out=out, workers=workers, cold=cold, **asked), clock)
        wall, own = time.monotonic() - started, _own_cpu_s() - own
        clock.stage("end")
    return {
        "wall_s": wall,
        "cpu_s": cpu[0] if cpu else None,
        "own_cpu_s": own,
        "tasks": len(report.task_ids),
        "stages": clock.seconds,
        "starts": dict(tally.starts),
        "runs": dict(tally.runs),
        "mean_run_ms": 1000 * statistics.fmean(tally.run_s) if tally.run_s else 0.0,
    }


def _own_cpu_s() -> float:
    """CPU seconds of gen's own process (its threads: workers, session supervisors), without
    the jails it starts: one interpreter lock, so near the wall time it is what bounds a gen."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def run_one(
    repo: str, out: Path, workers: int, cold: bool, kinds: str | None = None
) -> dict[str, Any]:
    command = [sys.executable, __file__, "--one", repo, "--out", str(out)]
    command += ["--workers", str(workers), *(["--cold"] if cold else [])]
    command += ["--kinds", kinds] if kinds is not None else []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"gen of {repo} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def different_tasks(a: Path, b: Path) -> list[str]:
    """The files in which two mintings differ, compared as the bundled-batch test compares a
    fresh gen with the committed batch: byte for byte, but for the timing limits of the hidden
    task.json (derived from measured call times, which a busy machine moves) and the manifest
    (which hashes those)."""
    names = {p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()}
    names |= {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file()}
    wanted = [n for n in sorted(names) if n.startswith(("specs/", "reference_impls/"))]
    return [n for n in wanted if not n.endswith("manifest.json") and not _same(a / n, b / n)]


def _same(a: Path, b: Path) -> bool:
    if not (a.is_file() and b.is_file()):
        return False
    if a.name == "task.json" and a.parent.parent.name == "reference_impls":
        return _untimed(a) == _untimed(b)
    return a.read_bytes() == b.read_bytes()


def _untimed(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    for name in ("call_timeout_s", "total_timeout_s"):
        data.get("grading", {}).pop(name, None)
    return data


def _libraries(args: argparse.Namespace, scratch: Path) -> list[tuple[str, str]]:
    found = [] if args.no_samplelib else [("samplelib", str(SAMPLELIB))]
    if args.lib:
        sys.path.insert(0, str(ROOT))
        from tests.e2e.conftest import sdist_repo  # the e2e tests' pinned-sdist fetching

        for pin in args.lib:
            name, _, version = pin.partition("==")
            found.append((pin, str(sdist_repo(scratch / name, name, version))))
    return found


def _default_workers() -> int:
    """What `replicate gen` uses by default, in the code this script runs with."""
    sys.path.insert(0, str(ROOT))
    try:
        from replicate.cli.gen import default_workers
    except ImportError:  # code from before it was named: one worker per core
        return os.cpu_count() or 2
    return default_workers()


def _median(runs: list[dict[str, Any]], key: str) -> float:
    values = [r[key] for r in runs if r[key] is not None]
    return statistics.median(values) if values else float("nan")


def report(
    name: str, fast: list[dict[str, Any]], cold: list[dict[str, Any]], differ: list[str]
) -> None:
    print(f"\n## {name}  (rounds: {len(fast)}; same tasks both ways: {not differ})")
    for path in differ[:20]:
        print(f"  differs: {path}")
    stages = list(dict.fromkeys([*fast[0]["stages"], *cold[0]["stages"]]))
    print(f"{'stage':58} {'fast s':>8} {'cold s':>8} {'ratio':>7}")
    for stage in stages:
        f = statistics.median(r["stages"].get(stage, 0.0) for r in fast)
        c = statistics.median(r["stages"].get(stage, 0.0) for r in cold)
        print(f"{stage[:58]:58} {f:8.1f} {c:8.1f} {c / f if f else float('nan'):6.2f}x")
    print(f"\n{'jails started by':40} {'fast':>7} {'cold':>7}")
    for stage in sorted({*fast[0]["starts"], *cold[0]["starts"]}):
        print(f"{stage:40} {fast[0]['starts'].get(stage, 0):7} {cold[0]['starts'].get(stage, 0):7}")
    total_f, total_c = (sum(r[0]["starts"].values()) for r in (fast, cold))
    print(f"{'all':40} {total_f:7} {total_c:7}")
    runs_f, runs_c = (sum(r[0].get("runs", {}).values()) for r in (fast, cold))
    print(f"{'program runs (cold, warm, in sessions)':40} {runs_f:7} {runs_c:7}")
    print(f"\n{'':24} {'fast':>9} {'cold':>9} {'cold/fast':>10}")
    rows = (
        ("wall_s", "wall s"),
        ("cpu_s", "CPU s (process tree)"),
        ("own_cpu_s", "CPU s (gen's process)"),
    )
    for key, label in rows:
        f, c = _median(fast, key), _median(cold, key)
        print(f"{label:24} {f:9.1f} {c:9.1f} {c / f:9.2f}x")
    f, c = _median(fast, "mean_run_ms"), _median(cold, "mean_run_ms")
    print(f"{'mean ms per program run':24} {f:9.1f} {c:9.1f} {c / f:9.2f}x")
    rate_f = 60 * fast[0]["tasks"] / _median(fast, "wall_s")
    rate_c = 60 * cold[0]["tasks"] / _median(cold, "wall_s")
    print(f"{'tasks per minute':24} {rate_f:9.1f} {rate_c:9.1f} {rate_f / rate_c:9.2f}x")
    print(f"{'tasks':24} {fast[0]['tasks']:9} {cold[0]['tasks']:9}")


def every_kind() -> str:
    """Every kind gen mints, in the code this script runs with (`--kinds` of `gen`)."""
    sys.path.insert(0, str(ROOT))
    from replicate.core import TaskKind
    from replicate.gen import MINTED_KINDS

    return ",".join(kind.value for kind in TaskKind if kind in MINTED_KINDS)


def tasks_by_kind(out: Path) -> Counter[str]:
    """The batch's tasks, counted by task kind (a classmethod's task is a method task)."""
    specs = (json.loads(p.read_text()) for p in out.glob("specs/*/task.json"))
    named = (str(spec.get("kind", "?")) for spec in specs)
    return Counter(kind if kind in ("function", "class", "module") else "method" for kind in named)


def by_kinds(name: str, repo: str, scratch: Path, args: argparse.Namespace) -> None:
    """Function and method only against every kind, both with the speed-ups, `args.rounds`
    times (which goes first alternating); printed as the ratio of their median wall times."""
    modes = {"function,method": "two", every_kind(): "all"}
    runs: dict[str, list[dict[str, Any]]] = {kinds: [] for kinds in modes}
    for n in range(args.rounds):
        for kinds in sorted(modes, reverse=n % 2 == 1):
            out = scratch / f"{name}-{n}-{modes[kinds]}"
            runs[kinds].append({**run_one(repo, out, args.workers, False, kinds), "out": out})
    print(f"\n## {name}  (rounds: {args.rounds})")
    stages = list(dict.fromkeys(s for mode in runs.values() for s in mode[0]["stages"]))
    print(f"{'stage':58} " + " ".join(f"{k:>24}" for k in modes))
    for stage in stages:
        cells = (statistics.median(r["stages"].get(stage, 0.0) for r in runs[k]) for k in modes)
        print(f"{stage[:58]:58} " + " ".join(f"{c:24.1f}" for c in cells))
    for kinds in modes:
        counted = dict(sorted(tasks_by_kind(runs[kinds][0]["out"]).items()))
        print(f"{kinds:40} wall {_median(runs[kinds], 'wall_s'):7.1f} s  tasks {counted}")
    two, every = (_median(runs[k], "wall_s") for k in modes)
    print(f"gen time, {every_kind()} / function,method: {every / two:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", action="append", help="NAME==VERSION of a pinned PyPI sdist")
    parser.add_argument("--no-samplelib", action="store_true")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--workers", type=int, default=_default_workers())
    parser.add_argument("--keep", action="store_true", help="keep the minted batches")
    parser.add_argument(
        "--by-kinds", action="store_true", help="every kind gen mints against function,method"
    )
    parser.add_argument("--kinds", help=argparse.SUPPRESS)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--cold", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_gen(args.one, args.out, args.workers, args.cold, args.kinds)))
        return
    scratch = Path(tempfile.mkdtemp(prefix="bench-gen-"))
    try:
        for name, repo in _libraries(args, scratch):
            if args.by_kinds:
                by_kinds(name, repo, scratch, args)
                continue
            runs: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
            for n in range(args.rounds):
                for cold in (n % 2 == 1, n % 2 == 0):  # alternate which goes first
                    out = scratch / f"{name}-{n}-{'cold' if cold else 'fast'}"
                    runs[cold].append(run_one(repo, out, args.workers, cold))
            differ = different_tasks(scratch / f"{name}-0-fast", scratch / f"{name}-0-cold")
            report(name, runs[False], runs[True], differ)
    finally:
        if args.keep:
            print(f"\nmintings kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
