"""`replicate gen --repos FILE --out DIR`: many repositories into one batch (the options added
to `gen`, and its handler when `--repos` is given)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.markup import escape
from rich.table import Table

from replicate.cli import numbers
from replicate.cli.console import err_console
from replicate.cli.executors import add_executor_arguments
from replicate.cli.progress import progress_display
from replicate.errors import ReplicateError
from replicate.executors import get_executor
from replicate.gen import CARD_MD, DEFAULT_KINDS, BatchCard, ManyOptions, mint_many, parse_kinds


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_executor_arguments(p, "with --repos: where repositories are minted")
    p.add_argument(
        "--jobs",
        type=numbers.count,
        default=1,
        help="with --repos and --executor local: repositories minted at once (default 1)",
    )


def handle(args: argparse.Namespace) -> int:
    if args.commit or args.budget is not None or args.fresh or args.cold:
        raise ReplicateError(
            "--commit, --budget, --fresh and --cold are for --repo (in --repos write "
            "SOURCE@COMMIT; --repo-budget bounds each repository)"
        )
    options = ManyOptions(
        repos_file=args.repos,
        out=args.out,
        limit=args.limit,
        sandbox=args.sandbox,
        workers=args.workers,
        min_kill_rate=None if args.no_strength else args.min_kill_rate,
        repo_budget_s=args.repo_budget,
        replace=args.replace,
        kinds=DEFAULT_KINDS if args.kinds is None else parse_kinds(args.kinds),
    )
    executor = get_executor(args.executor, parallel=args.jobs, address=args.ray_address)
    with executor, progress_display(plain=args.json) as progress:
        report = mint_many(options, executor, progress)
    if args.json:
        payload: dict[str, Any] = report.card.model_dump(mode="json")
        print(json.dumps({**payload, "skipped": list(report.skipped)}, indent=2))
    else:
        err_console().print(card_table(report.card))
        err_console().print(f"card written to {escape(str(report.out / CARD_MD))}")
    return 0


def card_table(card: BatchCard) -> Table:
    t = card.totals
    table = Table(title=f"{t.minted}/{t.repositories} repositories, {t.tasks} tasks")
    for column in ("source", "repository", "tasks", "yield", "kill rate", "result"):
        table.add_column(column, justify="right" if column in ("tasks", "yield") else "left")
    for r in card.repositories:
        yield_text = "-" if r.yield_rate is None else f"{r.yield_rate:.0%}"
        kills = "-" if r.kill_rate_median is None else f"{r.kill_rate_median:.2f}"
        table.add_row(
            escape(r.source),
            escape(r.key or "-"),
            str(r.tasks),
            yield_text,
            kills,
            escape(r.failure or "minted"),
        )
    return table
