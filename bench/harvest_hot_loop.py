"""The recorder's cost on a hot loop: a test calling a traced function 1,000,000 times.

A tiny project whose tests call `scale(3)` (a plain argument) and `weigh(box)` (an object,
told apart only by its pickle) N times each, `heft(box)` N/100 times on a box of 100,000
items that changes between calls (every call distinct, each pickle far over the size limit),
and `hold(case)` N/1,000 times on an object that refuses to pickle after ~50 KB of its state
(as a test case passed as `self` does: it holds the running test's outcome), run by pytest in
a plain subprocess (no sandbox):

  none      — pytest without the recording plugin (the floor)
  distinct  — the plugin of this checkout (distinct calls, a share per test, hot loops let be)
  attempts  — the same plugin with the former attempt budget (`"budget": "attempts"`)
  REF       — with --against REF: the plugin as it was at that git revision

Each way runs --repeat times; the median wall time is printed with its ratio to `none`.

    python bench/harvest_hot_loop.py [--calls 1000000] [--repeat 3] [--against REF]
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
sys.path.insert(0, str(REPO_ROOT))  # this checkout's code, whatever else is installed

from replicate.harvest import PLUGIN_FILES, install_plugin  # noqa: E402
from replicate.jail import module_file  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
CORE = """
class Box:
    def __init__(self, n):
        self.n = n


def scale(x):
    return x * 2


def weigh(box):
    return box.n * 2


def heft(box):
    return len(box.n)


def hold(case):
    return case.number
"""
TESTS = """
import threading

from pkg.core import Box, heft, hold, scale, weigh

CALLS = {calls}


def test_plain_hot_loop():
    for _ in range(CALLS):
        scale(3)


def test_object_hot_loop():
    box = Box(3)
    for _ in range(CALLS):
        weigh(box)


def test_large_object_loop():
    box = Box([list(range(1000)) for _ in range(100)])
    for i in range(CALLS // 100):
        box.n[i % 100].append(i)
        heft(box)


class Case:
    def __init__(self, number):
        self.number = number
        self.state = [[str(i) for i in range(100)] for _ in range(100)]  # no one list is huge
        self.outcome = threading.Lock()  # pickled last, refused


def test_refusing_object_loop():
    for i in range(CALLS // 1000):
        hold(Case(i))
"""
TARGETS = [
    {"key": "pkg.core.scale", "module": "pkg.core", "qualname": "scale", "kind": "function"},
    {"key": "pkg.core.weigh", "module": "pkg.core", "qualname": "weigh", "kind": "function"},
    {"key": "pkg.core.heft", "module": "pkg.core", "qualname": "heft", "kind": "function"},
    {"key": "pkg.core.hold", "module": "pkg.core", "qualname": "hold", "kind": "function"},
]


def project(root: Path, calls: int) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text(CORE)
    (root / "tests" / "test_core.py").write_text(TESTS.format(calls=calls))
    return root


def plugin_at(ref: str, folder: Path) -> None:
    """The plugin files as they were at git revision `ref` (those that existed then)."""
    folder.mkdir(parents=True)
    for name, module in PLUGIN_FILES.items():
        rel = Path(str(module.__file__)).resolve().relative_to(REPO_ROOT).as_posix()
        done = subprocess.run(
            ["git", "show", f"{ref}:{rel}"], cwd=REPO_ROOT, capture_output=True, check=False
        )
        if done.returncode == 0:
            (folder / name).write_bytes(done.stdout)


def run(project_dir: Path, plugin: Path | None, budget: str, scratch: Path) -> float:
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    env = {"PATH": os.environ.get("PATH", ""), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env["PYTHONPATH"] = str(project_dir)
    if plugin is not None:
        out = scratch / "harvest.jsonl"
        out.unlink(missing_ok=True)
        config = {
            "targets": TARGETS,
            "out": str(out),
            "max_per_target": 200,
            "budget": budget,
            "by_value": module_file(),  # cloudpickle for what pickle refuses, as gen has it
        }
        (scratch / "harvest.json").write_text(json.dumps(config))
        argv[3:3] = ["-p", "replicate_harvest"]
        env["PYTHONPATH"] = f"{plugin}:{project_dir}"
        env["REPLICATE_HARVEST"] = str(scratch / "harvest.json")
    started = time.monotonic()
    subprocess.run(argv, cwd=project_dir, env=env, check=True, capture_output=True)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", help="git revision whose plugin to measure too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        scratch = Path(name)
        proj = project(scratch / "project", args.calls)
        install_plugin(scratch / "plugin")
        ways: dict[str, tuple[Path | None, str]] = {
            "none": (None, ""),
            "distinct": (scratch / "plugin", "distinct"),
            "attempts": (scratch / "plugin", "attempts"),
        }
        if args.against:
            plugin_at(args.against, scratch / "old")
            ways[args.against] = (scratch / "old", "")
        times: dict[str, list[float]] = {way: [] for way in ways}
        for _ in range(args.repeat):  # interleaved, so a slow spell of the machine hits all
            for way, (plugin, budget) in ways.items():
                times[way].append(run(proj, plugin, budget, scratch))
    floor = statistics.median(times["none"])
    calls = 2 * args.calls + args.calls // 100 + args.calls // 1000
    print(f"{calls} calls of traced functions in one pytest run, median of {args.repeat}")
    for way, found in times.items():
        median = statistics.median(found)
        print(f"  {way:<12} {median:7.2f} s   {median / floor:5.2f} x none")


if __name__ == "__main__":
    main()
