"""`replicate gen --repo URL|PATH --out DIR`: mint tasks from a repository."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from replicate.cli import gen_many, numbers
from replicate.cli.console import err_console
from replicate.cli.progress import progress_display
from replicate.cli.run import default_workers as usable_cores
from replicate.core import Funnel
from replicate.errors import ReplicateError
from replicate.gen import (
    DEFAULT_KINDS,
    DEFAULT_MIN_KILL_RATE,
    LEDGER,
    GenOptions,
    GenReport,
    mint,
    parse_kinds,
)
from replicate.jail import sandbox_names


def default_workers() -> int:
    """Targets minted at once: twice the cores this process may use.  A worker alternates
    between gen's own Python (one interpreter lock for all of them) and waiting on its jails;
    with one per core, a core sits idle whenever both workers want the lock.  Measured with
    `bench/gen_speed.py --workers N`: more-itertools on 2 cores took ~113 s with 2 workers,
    ~102-107 s with 4, no less with 6; the same tasks each time."""
    return 2 * usable_cores()


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "gen", help="mint tasks from a git repository (URL or local path)"
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--repo",
        help="git URL, local repository, plain directory, pypi:NAME==VERSION or npm:NAME@VERSION",
    )
    which.add_argument(
        "--repos", type=Path, metavar="FILE", help="mint every source listed in FILE (one a line)"
    )
    p.add_argument("--commit", help="revision to pin (default: HEAD)")
    p.add_argument("--out", required=True, type=Path, help="task batch directory to write")
    p.add_argument("--limit", type=numbers.count, help="mint at most N tasks")
    p.add_argument("--sandbox", default="local", choices=sandbox_names())
    p.add_argument(
        "--workers",
        type=numbers.count,
        default=default_workers(),
        help="targets minted at once (default: twice the cores)",
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="drop tasks of another commit of the repo (--repos: keep the last line's commit)",
    )
    p.add_argument(
        "--min-kill-rate",
        type=numbers.rate,
        default=DEFAULT_MIN_KILL_RATE,
        metavar="RATE",
        help="mutants of each reference are graded, the kill rate recorded, inputs that kill "
        f"survivors added; drop tasks below RATE (0..1; 0 keeps all; default "
        f"{DEFAULT_MIN_KILL_RATE})",
    )
    p.add_argument(
        "--no-strength",
        action="store_true",
        help="skip the mutant grading (faster; tasks record no kill rate)",
    )
    p.add_argument(
        "--budget",
        type=numbers.seconds,
        metavar="SECONDS",
        help="stop starting targets SECONDS after gen started, finish those at work and write "
        "the batch; running gen again without it mints the rest",
    )
    p.add_argument(
        "--fresh",
        action="store_true",
        help=f"mint every target again (by default targets {LEDGER} records as decided at this "
        "commit and grader version are not redone)",
    )
    p.add_argument(
        "--cold",
        action="store_true",
        help="without the speed-ups (compiled runner, exact warm pools): the same tasks, "
        "slower; to measure against",
    )
    p.add_argument(
        "--kinds",
        metavar="KINDS",
        help="task kinds to mint, comma-separated: function, method, class (every method of a "
        "class at once; needs method), module (every function and method body of a file at "
        "once; needs function and method); default: function,method,class; with --repos, in "
        "every repository",
    )
    p.add_argument("--json", action="store_true", help="print the funnel as JSON on stdout")
    p.add_argument(
        "--repo-budget",
        type=numbers.seconds,
        metavar="SECONDS",
        help="with --repos: a repository starts no more targets after 70%% of SECONDS and "
        "writes what it minted; one still minting at SECONDS is stopped and recorded as failed",
    )
    gen_many.add_arguments(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.repos is not None:
        return gen_many.handle(args)
    if args.executor != "local" or args.repo_budget is not None:
        raise ReplicateError("--executor and --repo-budget are for --repos")
    options = GenOptions(
        repo=args.repo,
        out=args.out,
        commit=args.commit,
        limit=args.limit,
        sandbox=args.sandbox,
        workers=args.workers,
        replace=args.replace,
        min_kill_rate=None if args.no_strength else args.min_kill_rate,
        budget_s=args.budget,
        fresh=args.fresh,
        cold=args.cold,
        kinds=DEFAULT_KINDS if args.kinds is None else parse_kinds(args.kinds),
    )
    with progress_display(plain=args.json) as progress:
        report = mint(options, progress)
    if report.resumed:
        err_console().print(
            f"resumed: {report.resumed} target(s) decided by an earlier run were taken from "
            f"{report.out / LEDGER}, not redone",
            soft_wrap=True,
        )
    if args.json:
        payload = {**report.funnel.model_dump(mode="json"), "tasks": list(report.task_ids)}
        print(json.dumps(payload, indent=2))
    else:
        err_console().print(funnel_table(report.funnel))
        _print_summary(report)
    return 0


def funnel_table(funnel: Funnel) -> Table:
    table = Table(title=f"{funnel.repo} @ {funnel.commit[:12]}  ({funnel.duration_s:.0f} s)")
    table.add_column("stage")
    table.add_column("kept", justify="right")
    table.add_column("main reasons for drops")
    for stage in funnel.stages:
        reasons = "; ".join(f"{why} ({n})" for why, n in stage.drops[:3])
        table.add_row(stage.stage, str(stage.count), reasons)
    return table


def _print_summary(report: GenReport) -> None:
    console = err_console()
    funnel = report.funnel
    if funnel.skipped_files:
        shown = ", ".join(f"{s.path} ({s.reason})" for s in funnel.skipped_files[:5])
        more = len(funnel.skipped_files) - 5
        console.print(
            f"skipped {len(funnel.skipped_files)} unparsable file(s): {escape(shown)}"
            + (f" and {more} more" if more > 0 else "")
        )
    for note in funnel.setup_notes:
        console.print(f"note: {escape(note)}")
    console.print(f"{len(report.task_ids)} tasks written to {report.out}")
