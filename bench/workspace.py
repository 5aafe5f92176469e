"""How fast an attempt's workspace is made: its repository written directly against by git.

`replicate run` makes a workspace per attempt: the repository's tree with the target stubbed,
TASK.md, and a git repository of one commit.  Both ways in one run, alternately: git's three
processes (`git init`, `git add -A --force`, `git commit`; `agents/workspace.py`
`commit_with_git`) and the repository written directly (`agents/workspace_git.py`).  Printed per
way: wall ms per workspace, this process's CPU ms and its children's; then the ratio.

    python bench/workspace.py [--tasks DIR] [--count 30] [--rounds 2]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from replicate.agents import workspace  # noqa: E402
from replicate.batch import Batch, LoadedTask  # noqa: E402


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def one_way(task: LoadedTask, count: int, direct: bool) -> tuple[float, float, float]:
    """Milliseconds per workspace: wall, own CPU, children's CPU."""
    written = workspace.write_repository
    if not direct:
        workspace.write_repository = lambda dest: False  # type: ignore[assignment]
    try:
        with tempfile.TemporaryDirectory(prefix="bench-workspace-") as scratch:
            began, (own, children) = time.perf_counter(), _cpu()
            for n in range(count):
                workspace.make_workspace(task, Path(scratch) / f"w{n}")
            wall, (own_after, children_after) = time.perf_counter() - began, _cpu()
    finally:
        workspace.write_repository = written  # type: ignore[assignment]
    per = 1000 / count
    return wall * per, (own_after - own) * per, (children_after - children) * per


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=REPO_ROOT, help="batch (default: bundled)")
    parser.add_argument("--count", type=int, default=30, help="workspaces per way and round")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    batch = Batch.open(args.tasks)
    task = batch.load(batch.select((), 1)[0])
    files = sum(1 for p in task.repo.tree.rglob("*") if p.is_file())
    print(f"{task.id}: a tree of {files} files")
    found: dict[str, list[tuple[float, float, float]]] = {"git": [], "direct": []}
    for _ in range(args.rounds):
        for way in found:
            found[way].append(one_way(task, args.count, way == "direct"))
    medians = {}
    for way, runs in found.items():
        medians[way] = [statistics.median(r[n] for r in runs) for n in range(3)]
        wall, own, children = medians[way]
        print(f"{way:7} wall {wall:6.1f} ms  own CPU {own:6.1f} ms  children {children:6.1f} ms")
    print(f"git/direct wall {medians['git'][0] / medians['direct'][0]:.2f}x")


if __name__ == "__main__":
    main()
