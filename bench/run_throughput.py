"""`replicate run` throughput: candidates graded per second, warm grading against cold, same run.

The agent is a shell command that, for every other task, copies the original target file (kept
in a folder mounted read-only for it) over the stub, and leaves the stub for the rest: half the
candidates earn 1.0 and are graded twice (the stability re-run), half earn 0 and once.  Both
modes run the same attempts on the same batch, alternately, `--rounds` times each; figures are
the medians, and the ratio is warm / cold.  Two figures, since the agent's own sandbox and the
workspace cost the same either way:

  run    — attempts per second of the whole `run` (workspace, agent, grade)
  grade  — candidates graded per second of grading time (the verdicts' own durations)
  typical — one over the median candidate's grading time (a few tasks whose inputs are slow to
            run weigh on `grade` whether warm or cold)

Each figure is measured for every `--agent-seconds S` given (default: 0 and 0.5): an agent that
writes at once, and one that first waits S seconds, as any agent that calls a model does (then the
other worker's workspace and sandbox start are done before a grade runs, and a warm grade has
the cores to itself).

    python bench/run_throughput.py [--tasks DIR] [--limit 24] [--workers 2] [--rounds 2]
                                   [--agent-seconds 0 0.5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from replicate.agents import AgentConfig  # noqa: E402
from replicate.batch import Batch  # noqa: E402
from replicate.cli.main import collect_less_often  # noqa: E402
from replicate.core import ResultRow  # noqa: E402
from replicate.jail import get_sandbox  # noqa: E402
from replicate.scoring import RunOptions, run_batch  # noqa: E402

AGENT = (
    'f="$ANSWERS/$REPLICATE_TARGET.py"; if [ -f "$f" ]; then cp "$f" "$REPLICATE_TARGET_FILE"; fi'
)


def answers(batch: Batch, ids: tuple[str, ...], folder: Path) -> None:
    """The original target file of every other task, named by its symbol."""
    for n, ident in enumerate(ids):
        if n % 2 == 0:
            task = batch.load(ident)
            (folder / f"{task.hidden.target.symbol}.py").write_bytes(task.original_source())


def one_run(
    tasks: Path,
    ids: tuple[str, ...],
    folder: Path,
    out: Path,
    args: argparse.Namespace,
    warm: bool,
    agent_seconds: float,
) -> tuple[float, tuple[ResultRow, ...]]:
    think = f"sleep {agent_seconds} && " if agent_seconds > 0 else ""
    command = f"ANSWERS={folder} && {think}{AGENT}"
    agent = AgentConfig(command, get_sandbox("local"), timeout_s=60, mounts=(str(folder),))
    options = RunOptions(
        tasks=tasks,
        out=out,
        agent=agent,
        sandbox_name="local",
        workers=args.workers,
        task_ids=ids,
        warm=warm,
    )
    started = time.perf_counter()
    rows = run_batch(options).rows
    return time.perf_counter() - started, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=REPO_ROOT, help="batch (default: bundled)")
    parser.add_argument("--limit", type=int, default=24)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--agent-seconds",
        type=float,
        nargs="+",
        default=[0.0, 0.5],
        help="the agent thinks this long first (each value measured in turn)",
    )
    args = parser.parse_args()
    collect_less_often()  # as `replicate run` sets its process up (replicate/cli/main.py)
    batch = Batch.open(args.tasks)
    ids = batch.select((), args.limit)
    with tempfile.TemporaryDirectory(prefix="bench-run-") as scratch:
        folder = Path(scratch) / "answers"
        folder.mkdir()
        answers(batch, ids, folder)
        for seconds in args.agent_seconds:
            print(f"agent thinks {seconds:g} s first", flush=True)
            measure(args, ids, folder, Path(scratch) / f"think-{seconds:g}", seconds)


def measure(
    args: argparse.Namespace, ids: tuple[str, ...], folder: Path, scratch: Path, seconds: float
) -> None:
    """`--rounds` cold and warm runs, alternately; the warm/cold ratios of their medians."""
    results: dict[str, list[tuple[float, float, float]]] = {"cold": [], "warm": []}
    verdicts: dict[str, list[tuple[object, ...]]] = {}
    for n in range(args.rounds):
        for mode in ("cold", "warm"):
            out = scratch / f"{mode}-{n}"
            wall, rows = one_run(args.tasks, ids, folder, out, args, mode == "warm", seconds)
            grades = [r.verdict.duration_s for r in rows]
            median = statistics.median(grades)
            results[mode].append((len(rows) / wall, len(rows) / sum(grades), 1 / median))
            verdicts.setdefault(mode, [(r.task_id, r.reward, r.reason) for r in rows])
            print(f"round {n + 1} {mode}: {len(rows)} attempts in {wall:.1f} s", flush=True)
    if verdicts["cold"] != verdicts["warm"]:
        sys.exit("warm and cold runs gave different verdicts")
    for index, name in enumerate(("run", "grade", "typical")):
        cold = statistics.median(r[index] for r in results["cold"])
        warm = statistics.median(r[index] for r in results["warm"])
        print(f"{name:7}  cold {cold:6.2f}/s  warm {warm:6.2f}/s  warm/cold {warm / cold:.2f}x")


if __name__ == "__main__":
    main()
