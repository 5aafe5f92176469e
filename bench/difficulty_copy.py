"""Does the copy ratio say what copying earns? A paste agent, graded for real.

For each task of a batch whose copy ratio names a visible function (`replicate.core.copying`),
the candidate is that function's body pasted in place of the target's (the rest of the file as
the agent got it, nothing renamed) and graded cold in the local sandbox. Printed: the mean reward
of the paste per copy-ratio bucket, and the ratio of the top bucket's to the bottom's, measured in
the same run. A measure that tells copies apart has the top bucket earn far more.

    python bench/difficulty_copy.py BATCH_DIR [--limit N] [--workers 2]
"""

from __future__ import annotations

import argparse
import ast
import statistics
import sys
import sysconfig
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this checkout's code, whatever else is installed

from replicate.batch import Batch, LoadedTask, difficulties  # noqa: E402
from replicate.cache import cache_root  # noqa: E402
from replicate.core import Difficulty  # noqa: E402
from replicate.grading import grade_text  # noqa: E402
from replicate.jail import Jail, context_for, get_sandbox  # noqa: E402

BUCKETS = ((0.0, 0.3), (0.3, 0.5), (0.5, 0.8), (0.8, 1.01))


def pasted_body(task: LoadedTask, copy_of: str) -> str | None:
    """The body of the function `copy_of` names ("path:line name" or "stdlib rel:line C.name")."""
    place = copy_of.removeprefix("stdlib ").split(" ", 1)[0]
    rel, _, line = place.rpartition(":")
    stdlib = copy_of.startswith("stdlib ")
    root = Path(sysconfig.get_paths()["stdlib"]) if stdlib else task.repo.tree
    text = (root / rel).read_text(encoding="utf-8", errors="replace")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno == int(line):
            body = node.body
            first = body[0]
            is_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            if is_doc and len(body) > 1:
                body = body[1:]
            lines = text.splitlines()[body[0].lineno - 1 : body[-1].end_lineno]
            return textwrap.dedent("\n".join(lines))
    return None


def paste(task: LoadedTask, body: str) -> str:
    """The target file with the target's body replaced by `body`."""
    source = task.original_source()
    span = task.hidden.target.body_span
    indent = task.hidden.target.body_indent
    lines = body.splitlines()
    text = "\n".join([lines[0], *(indent + x if x.strip() else x for x in lines[1:])])
    start = source.rfind(b"\n", 0, span.start_byte) + 1  # from the start of the line
    return (source[:start] + (indent + text).encode() + source[span.end_byte :]).decode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("batch", type=Path)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    batch = Batch.open(args.batch, verify=False)
    found = difficulties(batch, batch.ids)
    chosen = [(i, e.difficulty) for i, e in found.items() if e.difficulty.copy_of]
    chosen = chosen[: args.limit] if args.limit else chosen
    sandbox = get_sandbox("local")

    def grade(item: tuple[str, Difficulty]) -> tuple[float, float]:
        ident, measured = item
        task = batch.load(ident)
        body = pasted_body(task, measured.copy_of or "")
        if body is None:
            return measured.copy_ratio, 0.0
        verdict = grade_text(
            task, paste(task, body), Jail(context_for(task.repo, cache_root()), sandbox)
        )
        return measured.copy_ratio, verdict.reward or 0.0

    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        results = list(pool.map(grade, chosen))
    means: dict[tuple[float, float], float | None] = {}
    print(f"{len(results)} tasks of {len(found)} name a visible function; the paste graded:")
    for low, high in BUCKETS:
        rewards = [r for c, r in results if low <= c < high]
        mean = statistics.fmean(rewards) if rewards else None
        means[(low, high)] = mean
        shown = "-" if mean is None else f"{mean:.3f}"
        solved = sum(r >= 1.0 for r in rewards)
        print(
            f"  copy ratio [{low:.1f}, {min(high, 1.0):.1f}): {len(rewards):3d} tasks, "
            f"mean reward of the paste {shown}, solved {solved}"
        )
    top, bottom = means[BUCKETS[-1]], means[BUCKETS[0]]
    if top is not None and bottom:
        print(f"top bucket / bottom bucket: {top / bottom:.1f}x")


if __name__ == "__main__":
    main()
