"""`replicate export --tasks DIR --format NAME --out PATH`: a batch as a framework reads it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.table import Table

from replicate.batch import Batch, choose
from replicate.cli import numbers
from replicate.cli.console import err_console
from replicate.cli.difficulty import add_difficulty_arguments, difficulty_filters
from replicate.errors import ReplicateError
from replicate.exporters import EXPORTERS, ExportOptions, Written, exporter

OUT_HELP = "output path (rows: PATH.parquet, PATH.jsonl; inspect, harbor: an empty folder)"
BUILD_HELP = "harbor: also build and tag every task's images locally (docker)"
NO_VERIFY_HELP = "trust the batch as it is: skip checking its files against its manifest"


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "export", help="write a batch's tasks in a format a training framework reads"
    )
    p.add_argument("--tasks", required=True, type=Path, help="task batch directory")
    p.add_argument(
        "--format", default="rows", help=f"output format ({', '.join(sorted(EXPORTERS))})"
    )
    p.add_argument("--out", required=True, type=Path, help=OUT_HELP)
    p.add_argument("--task", action="append", default=[], help="task id or symbol (repeatable)")
    p.add_argument("--limit", type=numbers.count, default=None, help="at most N tasks")
    add_difficulty_arguments(p)
    p.add_argument("--split", default="train", help="split name recorded in each row")
    p.add_argument("--build-images", action="store_true", help=BUILD_HELP)
    p.add_argument("--no-verify", action="store_true", help=NO_VERIFY_HELP)
    p.add_argument("--json", action="store_true", help="print what was written as JSON on stdout")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    chosen = exporter(args.format)  # an unknown format fails before the batch is read
    if args.build_images and args.format != "harbor":
        raise ReplicateError("--build-images applies to --format harbor only")
    bands, bound = difficulty_filters(args)
    batch = Batch.open(args.tasks, verify=not args.no_verify)
    task_ids = choose(batch, args.task, args.limit, bands, bound)
    options = ExportOptions(split=args.split, build_images=args.build_images)
    written = chosen.export(batch, task_ids, args.out, options)
    if args.json:
        payload = {"format": args.format, "tasks": written.tasks, "files": _names(written)}
        print(json.dumps(payload, indent=2))
    else:
        err_console().print(_table(args.format, written))
    return 0


def _names(written: Written) -> list[str]:
    return [str(path) for path in written.files]


def _table(name: str, written: Written) -> Table:
    table = Table(title=f"export ({name}): {written.tasks} task(s)")
    table.add_column("file", overflow="fold")
    for path in written.files:
        table.add_row(str(path))
    return table
