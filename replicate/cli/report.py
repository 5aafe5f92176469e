"""`replicate report RUN_DIR [--compare RUN_DIR2] [--out FILE]`: one self-contained HTML page."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from replicate.cli.console import err_console
from replicate.errors import ReplicateError
from replicate.scoring import write_report, write_solve_rates

DEFAULT_NAME = "report.html"


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "report", help="write one self-contained HTML page about a run (and how another differs)"
    )
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the --out of `replicate run`")
    p.add_argument(
        "--compare", type=Path, metavar="RUN_DIR2", help="show task by task how this run differs"
    )
    p.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help=f"HTML file to write (default RUN_DIR/{DEFAULT_NAME})",
    )
    p.add_argument(
        "--write-solve-rate",
        action="store_true",
        help="also record each task's solve rate and mean reward in the batch's difficulty.json "
        "(for `--max-solve-rate`)",
    )
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    for run_dir in (args.run_dir, args.compare):
        if run_dir is not None and not run_dir.is_dir():
            raise ReplicateError(f"no such run directory: {run_dir}")
    out: Path = args.out or args.run_dir / DEFAULT_NAME
    if out.is_dir():
        raise ReplicateError(f"--out {out} is a directory; name an HTML file")
    if not out.parent.is_dir():
        raise ReplicateError(f"cannot write {out}: {out.parent} is not a directory")
    page = write_report(args.run_dir, out, args.compare)
    err_console().print(
        f"report on {len(page.tasks)} task(s), {len(page.run.rows)} attempt(s): {out}",
        soft_wrap=True,
        markup=False,
    )
    if args.write_solve_rate:
        count, path = write_solve_rates(page.run)
        err_console().print(
            f"solve rates of {count} task(s) recorded: {path}", soft_wrap=True, markup=False
        )
    return 0
