"""Class and module tasks minted per library, their yield, and the reference and stub on each.

For each pinned library with stateful classes (more-itertools 10.5.0, boltons 24.1.0,
sortedcontainers 2.4.0: their sdists made git repositories, their tests cut to those of a few
stateful classes, as `bench/class_kill_rates.py` does), one `replicate gen --kinds
function,method,class,module --no-strength` (`--limit N` passed on).  Printed per library: the
class targets gen found and those it decided (a class whose methods `--limit` left undecided is
not), the class tasks minted and their yield (of those found); the same for files (module
targets) and module tasks; the call sequences the module tasks took from their class tasks
(checked to be exactly those of the class tasks of their file); and whether the reference earns
1.0 and the stub 0.0 on every class and module task (each graded as a candidate is, the whole
file).  Exits 1 when a library yields no class or no module task, a module's sequences are not
its file's class tasks', or a reference or stub grade is off.

    PYTHONPATH=$PWD python bench/kinds_yield.py [--libs boltons,more-itertools,sortedcontainers]
        [--work DIR] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.class_kill_rates import LIBRARIES, Library, trimmed_repo
from replicate.batch import Batch, LoadedTask
from replicate.cache import cache_root
from replicate.core import TaskKind
from replicate.grading import grade_text, original_source, stubbed_source
from replicate.jail import Jail
from replicate.jail.context import context_for
from replicate.languages.python import discover_python
from replicate.sandbox import get_sandbox

KINDS = "function,method,class,module"


@dataclass(frozen=True)
class Yield:
    """One kind's count on one library: targets found, decided, tasks minted; grades off."""

    found: int
    decided: int
    minted: int
    off: tuple[str, ...]  # "<id>: reference R, stub S" where either is not as it must be

    @property
    def share(self) -> float:
        return self.minted / self.found if self.found else 0.0


def minted(lib: Library, work: Path, limit: int | None) -> tuple[Path, Path, float]:
    """The library's trimmed repository, its batch of every kind, and gen's wall seconds."""
    repo = trimmed_repo(lib, work)
    batch = work / f"{lib.name}-kinds"
    command = [sys.executable, "-m", "replicate", "gen", "--repo", str(repo), "--out", str(batch)]
    command += ["--kinds", KINDS, "--no-strength", "--json"]
    command += ["--limit", str(limit)] if limit else []
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"gen of {lib.name} failed: {done.stderr[-2000:]}")
    return repo, batch, float(json.loads(done.stdout).get("duration_s") or 0.0)


def graded_off(task: LoadedTask, jail: Jail) -> str | None:
    """What is off when the reference does not earn 1.0 or the stub 0.0 (None: both are)."""
    reference = grade_text(task, original_source(task).decode("utf-8"), jail, shrink=False)
    stub = grade_text(task, stubbed_source(task).decode("utf-8"), jail, shrink=False)
    if (reference.reward, stub.reward) == (1.0, 0.0):
        return None
    return f"{task.id}: reference {reference.reward} ({reference.reason}), stub {stub.reward}"


def kind_yield(batch: Path, symbols: set[str], kind: TaskKind) -> tuple[Yield, list[LoadedTask]]:
    """`kind`'s yield in `batch`: of `symbols` (its targets found), decided and minted."""
    opened = Batch.open(batch)
    tasks = [opened.load(i) for i in opened.ids if opened.spec(i).task_kind is kind]
    ledger = [json.loads(line) for line in (batch / "funnel.jsonl").open()]
    decided = {entry["symbol"] for entry in ledger if entry["symbol"] in symbols}
    off: list[str] = []
    if tasks:
        jail = Jail(context_for(tasks[0].repo, cache_root()), get_sandbox("local"))
        off = [text for t in tasks if (text := graded_off(t, jail)) is not None]
    return Yield(len(symbols), len(decided), len(tasks), tuple(off)), tasks


def library(lib: Library, work: Path, limit: int | None) -> tuple[str, list[str]]:
    """The library's table row and its failures."""
    repo, batch, seconds = minted(lib, work, limit)
    found = discover_python(repo)
    classes, class_tasks = kind_yield(batch, {c.symbol for c in found.classes}, TaskKind.CLASS)
    files, module_tasks = kind_yield(batch, {m.symbol for m in found.modules}, TaskKind.MODULE)
    sequences = sum(len(t.sequences) for t in module_tasks)
    taken = [t.id for t in module_tasks if _sequences(t) != _class_sequences(t, class_tasks)]
    row = (
        f"| {lib.name} {lib.version} | {classes.found} / {classes.decided} | {classes.minted} "
        f"({classes.share:.0%}) | {files.found} / {files.decided} | {files.minted} "
        f"({files.share:.0%}) | {sequences} | {_ok(classes)} | {_ok(files)} | {seconds:.0f} |"
    )
    failures = [*classes.off, *files.off]
    failures += [f"{ident}: not its class tasks' sequences" for ident in taken]
    failures += [f"{lib.name}: no class task"] if not class_tasks else []
    failures += [f"{lib.name}: no module task"] if not module_tasks else []
    return row, failures


def _sequences(task: LoadedTask) -> list[object]:
    return [hidden.sequence for hidden in task.sequences]


def _class_sequences(module: LoadedTask, classes: list[LoadedTask]) -> list[object]:
    """The sequences of the class tasks of `module`'s file, in class order: the module's own."""
    path = module.hidden.target.path
    same = sorted(
        (t for t in classes if t.hidden.target.path == path), key=lambda t: t.hidden.target.qualname
    )
    return [seq for task in same for seq in _sequences(task)]


def _ok(counted: Yield) -> str:
    good = counted.minted - len(counted.off)
    return f"{good}/{counted.minted}"


HEADER = (
    "| library | class targets found / decided | class tasks (yield) | files found / decided "
    "| module tasks (yield) | sequences in module tasks | class: ref 1.0, stub 0.0 "
    "| module: ref 1.0, stub 0.0 | gen s |\n|---|---|---|---|---|---|---|---|---|"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--libs", default="more-itertools,boltons,sortedcontainers")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=None, help="gen's --limit per library")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kinds-yield-"))
    work.mkdir(parents=True, exist_ok=True)
    rows, failures = [], []
    for name in args.libs.split(","):
        row, failed = library(LIBRARIES[name], work, args.limit)
        print(row, flush=True)
        rows.append(row)
        failures += failed
    print(f"\n{HEADER}")
    print("\n".join(rows))
    for failure in failures:
        print(f"FAIL {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
