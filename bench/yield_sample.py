"""Yield on libraries nobody tuned for: a reproducible random sample of popular pure-Python
packages (`bench/pypi_sample.txt`), minted with `replicate gen --repos`, and the funnel per library.

    python bench/yield_sample.py [--n 16] [--seed 2026] [--out DIR] [--jobs 1]
                                 [--repo-budget 1200] [--resolve] [-- GEN_ARGS...]

Draws `--n` names with `random.Random(seed).sample` from the list (the draw depends only on the
list's order and the seed), mints each pinned sdist (`pypi:NAME==VERSION`) into one batch, and
prints per library: targets extracted (functions, methods and classes), tasks, yield (tasks /
extracted), the same over function and method targets alone (the tasks minted from them / those
extracted: classes joined gen's default kinds after the yield was first measured so), the three
largest drop reasons and a failure if any; then the drop reasons summed over the sample, both
median yields, and how many libraries minted at least one task. A drawn name without a pin is
refused unless `--resolve`, which asks pip for its newest version and writes the pin into the
list (commit it).
GEN_ARGS after `--` go to every gen (e.g. `-- --no-strength`). Use `--out` to keep the batch and
re-print from it without minting again (`--report-only`).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replicate.core import DropReason
from replicate.languages import get_language
from replicate.languages.python_layout import TEST_DIRS, is_test_file

HERE = Path(__file__).resolve().parent
SAMPLE = HERE / "pypi_sample.txt"
NOT_STARTED = DropReason.TIME_BUDGET_REACHED.value


def read_sample(path: Path) -> list[str]:
    return [
        line.strip()
        for line in path.read_text(encoding="utf-8").split("\n")
        if line.strip() and not line.startswith("#")
    ]


def draw(entries: list[str], n: int, seed: int) -> list[str]:
    return random.Random(seed).sample(entries, min(n, len(entries)))


def resolve(entries: list[str], drawn: list[str], path: Path) -> list[str]:
    """Pin every drawn name that has no version, with pip's newest, in the list file too."""
    pinned = []
    for entry in drawn:
        if "==" not in entry:
            out = subprocess.run(
                [sys.executable, "-m", "pip", "index", "versions", entry],
                capture_output=True,
                text=True,
                check=False,
            ).stdout
            found = re.search(r"\(([^)]+)\)", out)
            if not found:
                raise SystemExit(f"cannot resolve a version of {entry}")
            text = path.read_text(encoding="utf-8")
            pin = f"{entry}=={found.group(1)}"
            path.write_text(re.sub(rf"^{re.escape(entry)}$", pin, text, flags=re.M))
            entry = pin
        pinned.append(entry)
    return pinned


def mint(drawn: list[str], out: Path, jobs: int, budget: int, gen_args: list[str]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    repos = out.parent / f"{out.name}.repos"
    repos.write_text("".join(f"pypi:{entry}\n" for entry in drawn), encoding="utf-8")
    argv = ["replicate", "gen", "--repos", str(repos), "--out", str(out), "--json"]
    argv += ["--jobs", str(jobs), "--repo-budget", str(budget), *gen_args]
    print("$", " ".join(argv), file=sys.stderr)
    subprocess.run(argv, check=False, stdout=subprocess.DEVNULL)


def drops_by_repo(batch: Path) -> dict[str, Counter[str]]:
    found: dict[str, Counter[str]] = defaultdict(Counter)
    ledger = batch / "funnel.jsonl"
    text = ledger.read_text(encoding="utf-8") if ledger.is_file() else ""
    for line in text.split("\n"):
        if line.strip():
            entry = json.loads(line)
            if not entry.get("kept"):
                found[entry["repo"]][entry.get("reason") or "(no reason)"] += 1
    return found


def not_started(line: dict[str, Any]) -> int:
    """Targets a repository's time budget left unstarted (`--repo-budget`: past its soft share,
    no target is started): the card counts them, the ledger of targets does not."""
    return sum(n for reason, n in line.get("drops") or () if reason == NOT_STARTED)


def ships_tests(batch: Path, key: str) -> bool | None:
    """Whether the tree minted holds a test module or a tests folder (an sdist may ship none);
    None when the batch holds no tree of it (its minting failed)."""
    trees = [t for t in (batch / "reference_impls" / "_repos").glob("*/tree") if key_of(t) == key]
    if not trees:
        return None
    return any(
        is_test_file(path.name) or set(path.relative_to(tree).parts[:-1]) & TEST_DIRS
        for tree in trees
        for path in tree.rglob("*.py")
    )


def key_of(tree: Path) -> str:
    meta = tree.parent / "repo.json"
    if not meta.is_file():
        return ""
    return str(json.loads(meta.read_text(encoding="utf-8")).get("key", ""))


@dataclass(frozen=True)
class Row:
    source: str
    extracted: int  # every target: functions, methods and classes (the card's count)
    tasks: int
    functions: int  # function and method targets alone
    function_tasks: int  # tasks minted from them
    top: str
    failure: str
    tested: bool | None

    @property
    def rate(self) -> float | None:
        return self.tasks / self.extracted if self.extracted else None

    @property
    def function_rate(self) -> float | None:
        return self.function_tasks / self.functions if self.functions else None


def functions_of(batch: Path, key: str) -> set[str]:
    """The function and method targets of the tree minted as `key` (its classes left out)."""
    trees = [t for t in (batch / "reference_impls" / "_repos").glob("*/tree") if key_of(t) == key]
    language = get_language("python")
    return {t.symbol for tree in trees for t in language.discover(tree).targets}


def kept_by_repo(batch: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    ledger = batch / "funnel.jsonl"
    text = ledger.read_text(encoding="utf-8") if ledger.is_file() else ""
    for line in text.split("\n"):
        if line.strip() and json.loads(line).get("kept"):
            entry = json.loads(line)
            found[entry["repo"]].add(entry["symbol"])
    return found


def rows_of(batch: Path, card: dict[str, Any], summed: Counter[str]) -> list[Row]:
    drops, kept = drops_by_repo(batch), kept_by_repo(batch)
    rows = []
    for line in card["repositories"]:
        key = line.get("key") or ""
        mine = drops.get(key, Counter())
        if not_started(line):
            mine[NOT_STARTED] += not_started(line)
        summed.update(mine)
        functions = functions_of(batch, key) if key else set()
        top = "; ".join(f"{n} {r}" for r, n in mine.most_common(3))
        rows.append(
            Row(
                line["source"], line["extracted"], line["tasks"], len(functions),
                len(kept.get(key, set()) & functions), top, line.get("failure") or "",
                ships_tests(batch, key) if key else None,
            )
        )  # fmt: skip
    return rows


def _percent(rate: float | None) -> str:
    return f"{rate:6.0%}" if rate is not None else "     -"


def _median(rates: list[float | None]) -> float:
    found = [r for r in rates if r is not None]
    return statistics.median(found) if found else 0.0


def report(batch: Path) -> None:
    card = json.loads((batch / "card.json").read_text(encoding="utf-8"))
    summed = Counter[str]()
    rows = rows_of(batch, card, summed)
    print(
        f"{'library':30} {'extracted':>9} {'tasks':>5} {'yield':>6} {'fn+meth':>9}"
        f" {'tasks':>5} {'yield':>6}  largest drops / failure"
    )
    for r in rows:
        print(
            f"{r.source[:30]:30} {r.extracted:9d} {r.tasks:5d} {_percent(r.rate)}"
            f" {r.functions:9d} {r.function_tasks:5d} {_percent(r.function_rate)}"
            f"  {r.failure or r.top}"
        )
    print("\ndrop reasons summed over the sample:")
    for reason, count in summed.most_common(12):
        print(f"  {count:5d}  {reason}")
    minting = sum(1 for r in rows if r.tasks > 0)
    print(
        f"\nmedian yield {_median([r.rate for r in rows]):.0%} over every target (classes too), "
        f"{_median([r.function_rate for r in rows]):.0%} over functions and methods (tasks "
        f"minted from them / those extracted), {len(rows)} libraries; "
        f"{minting} of {len(rows)} minted at least one task"
    )
    tested = [r for r in rows if r.tested is not False]
    print(
        "minted trees without a test module or tests folder: "
        f"{', '.join(r.source for r in rows if r.tested is False) or 'none'}; of the "
        f"{len(tested)} others {sum(1 for r in tested if r.tasks > 0)} minted at least one task, "
        f"median yield {_median([r.rate for r in tested]):.0%} "
        f"({_median([r.function_rate for r in tested]):.0%} over functions and methods)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=16)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--repo-budget", type=int, default=1200)
    parser.add_argument("--resolve", action="store_true")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("gen_args", nargs="*")
    args = parser.parse_args()
    entries = read_sample(SAMPLE)
    drawn = draw(entries, args.n, args.seed)
    unpinned = [e for e in drawn if "==" not in e]
    if unpinned and not args.resolve:
        raise SystemExit(f"drawn but not pinned (run with --resolve): {', '.join(unpinned)}")
    drawn = resolve(entries, drawn, SAMPLE) if unpinned else drawn
    print(f"seed {args.seed}, {len(drawn)} of {len(entries)}: {' '.join(sorted(drawn))}")
    out = args.out or Path(tempfile.mkdtemp(prefix="yield-sample-")) / "batch"
    if not args.report_only:
        mint(drawn, out, args.jobs, args.repo_budget, args.gen_args)
    report(out)


if __name__ == "__main__":
    main()
