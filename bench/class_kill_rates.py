"""Class tasks against their methods' tasks, on mutants placed where only later states reach
(eviction, rebalancing, buffered input): the positive control of the class kind.

For each pinned library: its sdist made a git repository, its tests cut to those of a few
stateful classes (a root `conftest.py` deselecting the rest, committed on top), minted with
`replicate gen --kinds function,method,class --no-strength`.  For every class task minted, each
mutant of its class (`PLACED`: a string replaced once inside the class's definition) is graded
as a candidate, the whole mutated file, on each of the class's method tasks (killed by them when
one earns less than 1) and on the class task (killed when it earns less than 1); besides, the
first `--auto` mutants gen's mutator makes of each method task's member (killed by that method
task, or by the class task), and its first `--uncovered` of each member that no method task
covers and the class task's call sequences call (a dunder, a method the tests call too rarely:
graded on every method task, the whole file being the candidate).  Prints, per class task, the
kill rates side by side; and checks the reference earns 1 and the stub 0 on every class task.
Exits 1 unless, on every library, the class task kills strictly more than the method tasks on
at least one class.

    PYTHONPATH=$PWD python bench/class_kill_rates.py [--libs boltons,more-itertools,...]
        [--work DIR] [--auto 2] [--uncovered 1] [--batch LIB=DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from replicate.acquire import pypi
from replicate.batch import Batch, LoadedTask
from replicate.cache import cache_root
from replicate.core import TaskKind
from replicate.gen.mutants import mutants
from replicate.gen.strength import definition_text, spliced_mutant, task_mutants
from replicate.grading import grade_text, original_source, stubbed_source
from replicate.jail import Jail
from replicate.jail.context import context_for
from replicate.sandbox import get_sandbox


@dataclass(frozen=True)
class Placed:
    """A mutant: `old` replaced by `new`, once, inside class `cls`'s definition."""

    cls: str
    old: str
    new: str
    where: str  # what state reaches it


@dataclass(frozen=True)
class Library:
    name: str
    version: str
    keep: tuple[str, ...]  # test node ids containing one of these run; the rest are deselected
    placed: tuple[Placed, ...]


LIBRARIES = {
    lib.name: lib
    for lib in (
        Library(
            "boltons",
            "24.1.0",
            ("tests/test_cacheutils.py", "tests/test_dictutils.py"),
            (
                Placed(
                    "LRI",
                    "self._anchor = anchor = oldanchor[NEXT]",
                    "self._anchor = anchor = oldanchor[PREV]",
                    "eviction, once full",
                ),
                Placed(
                    "LRI",
                    "if len(self) < self.max_size:",
                    "if len(self) <= self.max_size:",
                    "eviction, at capacity",
                ),
                Placed(
                    "OrderedMultiDict",
                    "if selfk != otherk or selfv != otherv:",
                    "if selfk != otherk:",
                    "equality of two dicts that hold items",
                ),
                Placed(
                    "OrderedMultiDict",
                    "return super().__getitem__(k)[-1]",
                    "return super().__getitem__(k)[0]",
                    "a key once it holds a second value",
                ),
                Placed(
                    "LRU",
                    "link = self._get_link_and_move_to_front_of_ll(key)",
                    "link = self._link_lookup[key]",
                    "a hit's recency, seen at a later eviction",
                ),
            ),
        ),
        Library(
            "more-itertools",
            "10.5.0",
            ("PeekableTests", "SeekableTests", "more.peekable", "more.seekable"),
            (
                Placed(
                    "peekable",
                    "return self._cache.popleft()",
                    "return self._cache.pop()",
                    "buffered input: two items cached",
                ),
                Placed(
                    "peekable",
                    "self._cache.extend(islice(self._it, n - cache_len))",
                    "self._cache.extend(islice(self._it, n - cache_len - 1))",
                    "buffered input: a slice past the cache",
                ),
                Placed(
                    "peekable",
                    "        if index < 0:\n            self._cache.extend(self._it)",
                    "        if not index < 0:\n            self._cache.extend(self._it)",
                    "buffered input: a negative index, the source not yet cached",
                ),
                Placed(
                    "peekable",
                    "elif index >= cache_len:",
                    "elif index > cache_len:",
                    "buffered input: an index just past the cache",
                ),
                Placed(
                    "seekable",
                    "                self._index += 1\n",
                    "                self._index += 2\n",
                    "buffered input: replay after a seek back",
                ),
                Placed(
                    "seekable",
                    "if remainder > 0:",
                    "if remainder > 1:",
                    "a seek past the cache",
                ),
            ),
        ),
        Library(
            "sortedcontainers",
            "2.4.0",
            ("sortedlist.SortedList.",),
            (
                Placed(
                    "SortedList",
                    "        elif len_lists_pos:\n            _maxes[pos] = _lists_pos[-1]",
                    "        elif len_lists_pos:\n            _maxes[pos] = _lists_pos[0]",
                    "rebalancing: the index after the largest is removed",
                ),
                Placed(
                    "SortedList",
                    "_lists[pos].append(value)\n                _maxes[pos] = value",
                    "_lists[pos].append(value)\n                _maxes[pos] = _maxes[pos]",
                    "the index after a largest value is added",
                ),
                Placed(
                    "SortedList",
                    "            return self._len\n\n        idx = bisect_right(",
                    "            return self._len - 1\n\n        idx = bisect_right(",
                    "a bisection past the largest of the values added",
                ),
                Placed(
                    "SortedList",
                    "        return _lists[pos][idx] == value",
                    "        return _lists[pos][idx] >= value",
                    "a lookup among the values added",
                ),
                Placed(
                    "SortedList",
                    "            return idx_right - idx_left\n",
                    "            return idx_right - idx_left - (idx_right > idx_left + 1)\n",
                    "a count once a value was added twice",
                ),
                Placed(
                    "SortedList",
                    "_maxes.insert(pos + 1, half[-1])",
                    "_maxes.insert(pos + 1, half[0])",
                    "rebalancing: a sublist split once the list is long",
                ),
                Placed(
                    "SortedList",
                    "                    _index[child] += 1\n",
                    "                    _index[child] += 2\n",
                    "rebalancing: the positional index kept up as a long list grows",
                ),
            ),
        ),
    )
}

MAX_UNCOVERED = 4  # uncovered members' mutants per class task (each graded on every method task)

CONFTEST = """
KEEP = {keep!r}  # bench/class_kill_rates.py: only these tests run


def pytest_collection_modifyitems(config, items):
    items[:] = [item for item in items if any(k in item.nodeid for k in KEEP)]
"""


def trimmed_repo(lib: Library, work: Path) -> Path:
    """The library's sdist repository with a commit that keeps only `lib.keep`'s tests."""
    source = pypi.sdist_repo(lib.name, lib.version, work / "sdists")
    repo = work / f"{lib.name}-trimmed"
    if not repo.exists():
        subprocess.run(["git", "clone", "-q", str(source), str(repo)], check=True)
        conftest = repo / "conftest.py"
        before = conftest.read_text() if conftest.exists() else ""
        conftest.write_text(before + CONFTEST.format(keep=lib.keep))
        ident = ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]
        subprocess.run(["git", "-C", str(repo), "add", "conftest.py"], check=True)
        commit = ["git", "-C", str(repo), *ident, "commit", "-qm", "only the chosen tests"]
        subprocess.run(commit, check=True)
    return repo


def minted(lib: Library, work: Path, given: Path | None = None) -> Path:
    """The library's batch: `given` (minted elsewhere with class tasks), else minted here."""
    if given is not None:
        return given
    batch = work / f"{lib.name}-batch"
    if not (batch / "reference_impls" / "manifest.json").exists():
        repo = trimmed_repo(lib, work)
        command = [sys.executable, "-m", "replicate", "gen", "--repo", str(repo), "--out"]
        command += [str(batch), "--kinds", "function,method,class", "--no-strength", "--json"]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"gen of {lib.name} failed: {done.stderr[-2000:]}")
    return batch


def mutated(task: LoadedTask, placed: Placed) -> str | None:
    """The class's file with `placed` in place, inside the class task's class; None: not found
    there exactly once."""
    source = original_source(task).decode("utf-8")
    span = task.hidden.target.def_span
    head, body, tail = (
        source[: span.start_byte],
        source[span.start_byte : span.end_byte],
        source[span.end_byte :],
    )
    if body.count(placed.old) != 1:
        return None
    return head + body.replace(placed.old, placed.new) + tail


def killed(task: LoadedTask, text: str, jail: Jail) -> bool | None:
    """Whether `task` tells the mutant file from the original (None: an infra error)."""
    verdict = grade_text(task, text, jail, shrink=False)
    if verdict.status == "infra_error" or verdict.reward is None:
        return None
    return verdict.reward < 1.0


@dataclass(frozen=True)
class Row:
    cls: str
    members: int
    sequences: str
    reference: float | None
    stub: float | None
    mutants: int
    by_methods: int
    by_class: int
    placed: tuple[str, ...]  # per placed mutant: "M C" kill marks


def uncovered_mutants(
    cls_task: LoadedTask, methods: list[LoadedTask], per_member: int
) -> list[str]:
    """Mutated files: gen's first `per_member` mutants of each member the class task's call
    sequences call that no method task covers (a dunder, a method the tests call too rarely)."""
    covered = {m.hidden.target.qualname for m in methods}
    called = {step.name for h in cls_task.sequences for step in h.sequence.steps}
    source = original_source(cls_task)
    found = []
    for member in cls_task.hidden.target.members:
        if member.qualname in covered or member.name not in called:
            continue
        try:
            made = mutants(definition_text(source, member.def_span), limit=per_member)
        except (SyntaxError, StopIteration, ValueError):
            continue
        for mutant in made:
            program = cls_task.language().replace_definition(source, mutant.text, member)
            if program is not None:
                found.append(program.decode("utf-8"))
    return found


def class_row(
    cls_task: LoadedTask, methods: list[LoadedTask], lib: Library, auto: int, uncovered: int
) -> Row:
    jail = Jail(context_for(cls_task.repo, cache_root()), get_sandbox("local"))
    ref = grade_text(cls_task, original_source(cls_task).decode("utf-8"), jail, shrink=False)
    stub = grade_text(cls_task, stubbed_source(cls_task).decode("utf-8"), jail, shrink=False)
    name = cls_task.hidden.target.qualname
    cases: list[tuple[str, str, list[LoadedTask]]] = []
    for placed in (p for p in lib.placed if p.cls == name):
        text = mutated(cls_task, placed)
        if text is not None:
            cases.append((f"{placed.where}", text, methods))
    for method in methods:
        for mutant in task_mutants(method)[:auto]:
            program = spliced_mutant(method, mutant)
            if program is not None:
                cases.append(("", program.decode("utf-8"), [method]))
    made = uncovered_mutants(cls_task, methods, uncovered)[:MAX_UNCOVERED]
    cases += [("", text, methods) for text in made]
    by_methods = by_class = 0
    marks = []
    for where, text, graders in cases:
        on_methods = any(killed(m, text, jail) for m in graders)
        on_class = bool(killed(cls_task, text, jail))
        by_methods += on_methods
        by_class += on_class
        if where:
            marks.append(f"{where}: methods {'kill' if on_methods else 'miss'}, "
                         f"class {'kill' if on_class else 'miss'}")  # fmt: skip
    strata: dict[str, int] = {}
    for hidden in cls_task.sequences:
        strata[hidden.stratum.value] = strata.get(hidden.stratum.value, 0) + 1
    return Row(
        name, len(methods), json.dumps(strata), ref.reward, stub.reward, len(cases), by_methods,
        by_class, tuple(marks),
    )  # fmt: skip


def library_rows(
    lib: Library, work: Path, auto: int, uncovered: int, given: Path | None = None
) -> list[Row]:
    batch = Batch.open(minted(lib, work, given))
    tasks = [batch.load(i) for i in batch.ids]
    classes = [t for t in tasks if t.spec.task_kind is TaskKind.CLASS]

    def one(cls_task: LoadedTask) -> Row:
        target = cls_task.hidden.target
        methods = [
            t
            for t in tasks
            if t.spec.task_kind is TaskKind.METHOD
            and t.hidden.target.module == target.module
            and t.hidden.target.class_name == target.qualname
        ]
        return class_row(cls_task, methods, lib, auto, uncovered)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(one, classes))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--libs", default=",".join(LIBRARIES))
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--auto", type=int, default=2, help="gen's mutants per method task")
    parser.add_argument(
        "--uncovered", type=int, default=1,
        help="gen's mutants per member the sequences call that has no method task",
    )  # fmt: skip
    parser.add_argument(
        "--batch", action="append", default=[], metavar="LIB=DIR",
        help="a batch of LIB already minted with class tasks (not minted again)",
    )  # fmt: skip
    args = parser.parse_args()
    given = {name: Path(folder) for name, _, folder in (b.partition("=") for b in args.batch)}
    work = args.work or Path(tempfile.mkdtemp(prefix="class-kill-rates-"))
    work.mkdir(parents=True, exist_ok=True)
    failures = []
    for name in args.libs.split(","):
        lib = LIBRARIES[name]
        rows = library_rows(lib, work, args.auto, args.uncovered, given.get(name))
        print(f"\n{lib.name} {lib.version}: {len(rows)} class tasks")
        print(f"{'class':<14} {'members':>7} {'sequences':<32} {'ref':>4} {'stub':>4} "
              f"{'mutants':>7} {'methods kill':>12} {'class kills':>11}")  # fmt: skip
        for row in rows:
            print(
                f"{row.cls:<14} {row.members:>7} {row.sequences:<32} {row.reference!s:>4} "
                f"{row.stub!s:>4} {row.mutants:>7} "
                f"{row.by_methods / max(row.mutants, 1):>12.2f} "
                f"{row.by_class / max(row.mutants, 1):>11.2f}"
            )
            for mark in row.placed:
                print(f"    placed: {mark}")
            if row.reference != 1.0 or row.stub != 0.0:
                failures.append(f"{lib.name} {row.cls}: reference {row.reference}, stub {row.stub}")
        if not any(row.by_class > row.by_methods for row in rows):
            failures.append(f"{lib.name}: no class task kills more than its method tasks")
    for failure in failures:
        print(f"FAIL {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
