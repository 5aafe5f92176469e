"""Does `copy` tell recall from re-implementation? The memorisation signal over a batch.

For every task of the batch (default: the bundled one at the repository root), three candidates
are spliced as `grade` splices them and their `copy` measured against the hidden original
(`replicate.grading.recall`, nothing run): the original definition itself; a renamed copy (its
locals renamed, its strings changed, laid out again with comments: `tests/disguise.py`); and,
where `tests/e2e/alternatives/` holds one, an independent re-implementation. `--attempts DIR`
adds the prepared attempts of `examples/attempts/` (some right, some partly right). Printed:
min / median / max of `copy` and of `copy_run` per kind, and the time one measure takes (against
the splice before it, measured in the same run).

    python bench/copy_signal.py [BATCH_DIR] [--attempts examples/attempts]
    python bench/copy_signal.py --tree SOURCE_TREE   (a library's targets, no batch needed)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this checkout's code, whatever else is installed

from replicate.batch import Batch, LoadedTask  # noqa: E402
from replicate.core import Recall, recall  # noqa: E402
from replicate.grading.recall import recalled  # noqa: E402
from replicate.languages.python import PythonLanguage  # noqa: E402
from tests.disguise import original_definition, renamed_copy  # noqa: E402
from tests.e2e.alternatives import more_itertools, samplelib  # noqa: E402

ALTERNATIVES = {**samplelib.ALTERNATIVES, **more_itertools.ALTERNATIVES}
KINDS = ("original", "renamed copy", "alternative", "prepared attempt")


def measure(task: LoadedTask, text: str) -> Recall | None:
    """`copy` of candidate text, spliced into the task's stubbed file as `grade` splices it."""
    target = task.hidden.target
    spliced = task.language().splice(task.stubbed_source(), text, target)
    return recalled(task, spliced)


def timed(task: LoadedTask, text: str) -> tuple[Recall | None, float, float]:
    """`measure`, with the seconds the splice took and those the measure took after it."""
    started = time.perf_counter()
    spliced = task.language().splice(task.stubbed_source(), text, task.hidden.target)
    spliced_at = time.perf_counter()
    found = recalled(task, spliced)
    return found, spliced_at - started, time.perf_counter() - spliced_at


def candidates(task: LoadedTask, attempts: dict[str, str]) -> Iterator[tuple[str, str]]:
    """(kind, candidate text) for one task."""
    span = task.hidden.target.def_span
    original = original_definition(task.original_source(), span.start_line, span.end_line)
    yield "original", original
    yield "renamed copy", renamed_copy(original)
    symbol = task.spec.source.symbol
    if symbol in ALTERNATIVES:
        yield "alternative", ALTERNATIVES[symbol]
    if symbol in attempts:
        yield "prepared attempt", attempts[symbol]


def in_tree(root: Path) -> Iterator[tuple[str, str, Recall | None]]:
    """(kind, symbol, Recall) of the original, a renamed copy and any alternative of every target of
    the source tree at `root` (no batch: its targets as `gen` would extract them)."""
    language = PythonLanguage()
    for target in language.discover(root).targets:
        source = (root / target.path).read_bytes()
        span = target.def_span
        original = original_definition(source, span.start_line, span.end_line)
        texts = [("original", original), ("renamed copy", renamed_copy(original))]
        if target.symbol in ALTERNATIVES:
            texts.append(("alternative", ALTERNATIVES[target.symbol]))
        theirs = language.body_tokens(source, target)
        stubbed = language.stub(source, target)
        for kind, text in texts:
            spliced = language.splice(stubbed, text, target, check=False)
            mine = language.body_tokens(spliced, target, stubbed)
            found = None if mine is None or theirs is None else recall(mine, theirs)
            yield kind, target.symbol, found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("batch", type=Path, nargs="?", default=REPO_ROOT)
    parser.add_argument("--attempts", type=Path, help="a folder of <symbol>.py attempts")
    parser.add_argument("--tree", type=Path, help="a library's source tree instead of a batch")
    args = parser.parse_args()
    if args.tree is not None:
        found: dict[str, list[tuple[Recall, str]]] = {kind: [] for kind in KINDS}
        for kind, symbol, one in in_tree(args.tree):
            if one is not None:
                found[kind].append((one, symbol))
        print(f"the targets of {args.tree}; copy, then copy_run (tokens):")
        report(found)
        return
    batch = Batch.open(args.batch, verify=False)
    attempts = {}
    if args.attempts is not None:
        attempts = {p.stem: p.read_text() for p in sorted(args.attempts.glob("*.py"))}
    found = {kind: [] for kind in KINDS}
    splicing, spent, measured = 0.0, 0.0, 0
    for ident in batch.ids:
        task = batch.load(ident)
        for kind, text in candidates(task, attempts):
            one, splice_s, measure_s = timed(task, text)
            splicing, spent, measured = splicing + splice_s, spent + measure_s, measured + 1
            if one is not None:
                found[kind].append((one, task.spec.source.symbol))
    print(f"{len(batch.ids)} tasks of {args.batch}; copy, then copy_run (tokens):")
    report(found)
    each = 1000 * spent / max(measured, 1)
    ratio = spent / splicing if splicing else 0.0
    print(f"{measured} candidates: the measure {each:.1f} ms each, {ratio:.1f}x the splice's time")


def report(found: dict[str, list[tuple[Recall, str]]]) -> None:
    for kind, values in found.items():
        if values:
            copies = [one.copy for one, _ in values]
            runs = [one.run for one, _ in values]
            print(
                f"  {kind:16s} n={len(values):3d}  copy min {min(copies):.2f} median "
                f"{statistics.median(copies):.2f} max {max(copies):.2f}  |  run min {min(runs)} "
                f"median {statistics.median(runs):.0f} max {max(runs)}"
            )
    for kind in ("alternative", "prepared attempt"):
        for one, symbol in sorted(found[kind], key=lambda item: -item[0].copy)[:3]:
            print(f"  highest {kind}: {symbol} copy {one.copy:.2f} run {one.run}")


if __name__ == "__main__":
    main()
