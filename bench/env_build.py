"""Resolving and building a repository's environment with uv against pip, in one run.

Each round resolves the requirements to a lock and builds the environment from it twice, once
with ``REPLICATE_INSTALLER=pip`` and once with ``uv``, each into a fresh cache of ours (the
tools' own download caches are warm after the first round, as on any machine that has minted
before).  Printed: each round's seconds, the medians, pip / uv as a ratio, and whether both
tools gave the same lock.

```bash
python bench/env_build.py [--req REQUIREMENT]... [--rounds 3]
```
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from replicate.envs.build import Lock, ensure_env, resolve_lock  # noqa: E402

# what a library's tests typically ask for
DEFAULT = ("pytest", "hypothesis", "coverage", "pytest-benchmark", "attrs", "sortedcontainers")


def one(tool: str, reqs: list[str]) -> tuple[float, float, Lock]:
    """Seconds to resolve `reqs` and to build their environment with `tool`, and the lock."""
    os.environ["REPLICATE_INSTALLER"] = tool
    with tempfile.TemporaryDirectory(prefix="bench-env-") as scratch:
        started = time.perf_counter()
        lock = resolve_lock(reqs, Path(scratch))
        resolved = time.perf_counter()
        ensure_env(lock, Path(scratch))
        built = time.perf_counter()
    return resolved - started, built - resolved, lock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--req", action="append", help="a requirement (default: a test set)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    reqs = list(args.req or DEFAULT)
    times: dict[str, list[tuple[float, float]]] = {"pip": [], "uv": []}
    locks: dict[str, Lock] = {}
    for n in range(args.rounds):
        for tool in ("pip", "uv"):
            resolve_s, build_s, locks[tool] = one(tool, reqs)
            times[tool].append((resolve_s, build_s))
            lines = len(locks[tool].lines)
            print(
                f"round {n + 1} {tool:3}: resolve {resolve_s:5.2f} s, build {build_s:5.2f} s "
                f"({lines} distributions)",
                flush=True,
            )
    print(f"same lock both ways: {locks['pip'] == locks['uv']}")
    for index, name in enumerate(("resolve", "build")):
        pip = statistics.median(t[index] for t in times["pip"])
        uv = statistics.median(t[index] for t in times["uv"])
        print(f"{name:8} pip {pip:5.2f} s  uv {uv:5.2f} s  pip/uv {pip / uv:.1f}x")


if __name__ == "__main__":
    main()
