"""Node grade latency: a JavaScript and a TypeScript task, distinct candidates, each graded cold
(a fresh jail and Node process per grade) and warm (a jail started ahead, `jail/node_warm.py`).

Each grade is the whole of `grading.javascript.grade_script` (splice, parse, run on the task's
hidden inputs, compare). The tasks are minted here by `replicate gen --no-strength`: the JS one
from a small CommonJS package written by this script, the TS one from corpus/tslib. Figures are
printed per task as the warm median and p95 over the cold ones measured in the same run (these
machines are noisy); between two warm grades the script waits `--gap` seconds, the time a
trainer or an agent takes before its next candidate, in which the pool starts the replacement.

With `--gen`, gen's own series on each task too: its mutants and its degenerate programs run
one after another, cold then in warm jails (each started while the one before runs), as wall
time and a ratio, and whether both ways found the same.

    python bench/node_grade_latency.py [--candidates 20] [--gap 0.3] [--work DIR] [--gen]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this checkout's code, whatever else is installed

from replicate.batch import Batch, LoadedTask  # noqa: E402
from replicate.gen.javascript_baseline import program_matches  # noqa: E402
from replicate.gen.javascript_strength import measure  # noqa: E402
from replicate.grading import javascript as graded  # noqa: E402
from replicate.jail import Sandbox, WarmPool, WarmStart, get_sandbox  # noqa: E402

JS_FILES = {
    "package.json": '{"name": "benchjs", "version": "1.0.0", "scripts": {"test": "node --test"}}',
    "index.js": (
        "'use strict';\n"
        "function slug(s) {\n"
        "  return s.trim().toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');\n"
        "}\n"
        "module.exports = { slug };\n"
    ),
    "test/index.test.js": (
        "'use strict';\n"
        "const test = require('node:test');\n"
        "const assert = require('node:assert');\n"
        "const { slug } = require('../index.js');\n"
        "test('slug', () => {\n"
        "  const cases = [['Hello World', 'hello-world'], ['  a  b ', 'a-b'], ['X__y', 'x-y'],\n"
        "    ['--Done--', 'done'], ['', ''], ['Caf\u00e9 au lait', 'caf-au-lait']];\n"
        "  for (const [s, want] of cases) assert.strictEqual(slug(s), want);\n"
        "});\n"
    ),
}
TS_TASK = "src/duration.formatDuration"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def minted(work: Path, name: str, repo: Path) -> Batch:
    """`repo` minted into `work/name` (once: an existing batch there is reused)."""
    out = work / name
    if not (out / "specs").is_dir():
        argv = [sys.executable, "-m", "replicate", "gen", "--repo", str(repo), "--out", str(out)]
        done = subprocess.run([*argv, "--no-strength"], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"gen {repo}: {done.stderr[-2000:]}")
    return Batch.open(out)


def js_repo(work: Path) -> Path:
    repo = work / "benchjs"
    if not repo.is_dir():
        for rel, text in JS_FILES.items():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text)
        _git(repo, "init", "-q")
        _git(repo, "add", "-A")
        _git(repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "bench")
    return repo


def candidate(task: LoadedTask, n: int) -> str:
    """The reference file made distinct per candidate, so no cache could answer."""
    return task.original_source().decode() + f"\n// bench candidate {n}\n"


def timed(task: LoadedTask, grades: int, grade: Callable[[str], object], gap: float) -> list[float]:
    times = []
    for n in range(grades):
        time.sleep(gap)
        text = candidate(task, n)
        started = time.perf_counter()
        score = grade(text)
        times.append(time.perf_counter() - started)
        if isinstance(score, str) or getattr(score, "reward", None) != 1.0:
            sys.exit(f"{task.id}: the reference did not earn 1.0: {score}")
    return times


def cold_and_warm(
    task: LoadedTask, sandbox: Sandbox, grades: int, gap: float
) -> tuple[list[float], list[float]]:
    cold = timed(task, grades, lambda text: graded.grade_script(task, text, sandbox), gap)
    with WarmPool(sandbox, per_key=1) as pool:  # type: ignore[arg-type]
        graded.prewarm_script(task, pool)
        warm = timed(task, grades, lambda text: graded.grade_script(task, text, sandbox, pool), gap)
        stats = pool.stats()
    print(f"  warm jails taken {stats.taken}, of which started ahead {stats.ready}")
    return cold, warm


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def report(label: str, cold: list[float], warm: list[float]) -> None:
    for name, values in (("cold", cold), ("warm", warm)):
        med, tail = statistics.median(values), p95(values)
        ratio, ratio95 = med / statistics.median(cold), tail / p95(cold)
        print(
            f"  {label} {name}: median {med * 1000:7.1f} ms  p95 {tail * 1000:7.1f} ms"
            f"  = {ratio:4.2f}x cold (p95 {ratio95:4.2f}x)"
        )


def gen_series(task: LoadedTask, sandbox: Sandbox, label: str) -> None:
    """Gen's two series on the task, its mutants (`measure`) and its degenerate programs
    (`program_matches`), cold then warm: wall time, and whether both found the same."""
    for name, run in (
        ("mutants", lambda warm: measure(task, sandbox, 0.0, 0.0, warm=warm)),
        ("programs", lambda warm: program_matches(task, sandbox, warm=warm)),
    ):
        seconds, found = [], []
        for warm in (False, True):
            started = time.perf_counter()
            found.append(run(warm))
            seconds.append(time.perf_counter() - started)
        same = "the same" if found[0] == found[1] else "DIFFERENT"
        print(
            f"  {label} gen {name}: cold {seconds[0]:5.2f} s, warm {seconds[1]:5.2f} s"
            f" = {seconds[1] / seconds[0]:4.2f}x cold ({same} results)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--gap", type=float, default=0.3, help="seconds between two grades")
    parser.add_argument("--work", type=Path, help="where the batches are minted (kept)")
    parser.add_argument("--gen", action="store_true", help="gen's mutants and programs too")
    args = parser.parse_args()
    sandbox = get_sandbox("local")
    assert isinstance(sandbox, WarmStart)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-node-"))
    work.mkdir(parents=True, exist_ok=True)
    js = minted(work, "js", js_repo(work))
    ts = minted(work, "ts", REPO_ROOT / "corpus" / "tslib")
    for label, batch, name in (("js", js, "index.slug"), ("ts", ts, TS_TASK)):
        task = batch.load(batch.resolve(name))
        print(f"{label}: {task.id}, {len(task.inputs)} hidden inputs, {args.candidates} candidates")
        report(label, *cold_and_warm(task, sandbox, args.candidates, args.gap))
        if args.gen:
            gen_series(task, sandbox, label)


if __name__ == "__main__":
    main()
