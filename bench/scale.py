"""`replicate gen --repos` throughput: the Ray executor against the local one, same run.

The same small libraries (pinned sdists) are minted into fresh batches, first once to warm the
caches (sdists, environments; not timed, unless --no-warmup), then with `--executor local
--jobs J` and `--executor ray` (a local Ray instance the command starts, its default CPUs = the
cores), alternately, `--rounds` times each. Figures: repositories and tasks per minute of wall
time, tasks per core-hour (wall time x cores), and the ratio ray / local of the medians. Ray
pays its start-up (a local instance: seconds) inside its timing, as a user would.

    python bench/scale.py [--limit 2] [--jobs 2] [--workers 1] [--rounds 1] [--no-warmup]
                          [--sources pypi:idna==3.10,pypi:pluggy==1.5.0,...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pypi:idna==3.10", "pypi:markupsafe==3.0.2", "pypi:pluggy==1.5.0", "pypi:tomli==2.0.1")


def gen(repos: Path, out: Path, args: argparse.Namespace, *extra: str) -> tuple[float, int]:
    """Wall seconds and tasks of one `gen --repos` into a fresh batch."""
    command = [sys.executable, "-m", "replicate", "gen", "--repos", str(repos), "--out", str(out)]
    command += ["--limit", str(args.limit), "--workers", str(args.workers), "--json", *extra]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    card = json.loads(done.stdout)
    failed = [r["source"] for r in card["repositories"] if r["status"] != "minted"]
    if failed:
        raise SystemExit(f"not minted: {failed}")
    return wall, int(card["totals"]["tasks"])


def ray_start_s() -> float:
    """Seconds to start and stop an empty local Ray instance here (what `--executor ray` pays
    before its first repository)."""
    code = (
        "import time; from replicate.executors.ray_cluster import RayExecutor; "
        "t = time.monotonic(); RayExecutor().close(); print(time.monotonic() - t)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", default=",".join(SOURCES))
    parser.add_argument("--limit", type=int, default=2, help="tasks per repository")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--workers", type=int, default=1, help="gen workers per repository")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--no-warmup", action="store_true")
    args = parser.parse_args()
    sources = args.sources.split(",")
    cores = os.cpu_count() or 1
    modes = {
        "local": ("--executor", "local", "--jobs", str(args.jobs)),
        "ray": ("--executor", "ray"),
    }
    walls: dict[str, list[float]] = {name: [] for name in modes}
    tasks: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        repos = Path(tmp) / "repos.txt"
        repos.write_text("\n".join(sources) + "\n")
        if not args.no_warmup:
            gen(repos, Path(tmp) / "warmup", args, *modes["local"])
        for n in range(args.rounds):
            for name, extra in modes.items():
                wall, count = gen(repos, Path(tmp) / f"{name}-{n}", args, *extra)
                walls[name].append(wall)
                tasks[name] = count
    print(
        f"{len(sources)} repositories, --limit {args.limit}, {cores} cores, {args.rounds} round(s)"
    )
    print(f"{'executor':<9} {'wall s':>7} {'repos/min':>10} {'tasks/min':>10} {'tasks/core-h':>13}")
    rates = {}
    for name in modes:
        wall = statistics.median(walls[name])
        rates[name] = tasks[name] / wall
        per_min = tasks[name] / wall * 60
        per_core_hour = tasks[name] / (wall * cores) * 3600
        repos_min = len(sources) / wall * 60
        print(f"{name:<9} {wall:7.1f} {repos_min:10.2f} {per_min:10.2f} {per_core_hour:13.1f}")
    if tasks["local"] != tasks["ray"]:
        print(f"note: the two batches differ in size ({tasks['local']} vs {tasks['ray']} tasks)")
    print(f"ray / local throughput: {rates['ray'] / rates['local']:.2f}x")
    print(f"of which ray's start-up and shutdown (an empty local instance): {ray_start_s():.1f} s")


if __name__ == "__main__":
    main()
