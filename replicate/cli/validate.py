"""`replicate validate --tasks DIR`: check a batch (schemas, paths, hashes, files) and tabulate."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from replicate.batch import BatchCheck, check_batch
from replicate.cli.console import err_console

SHOWN = 5  # manifest differences listed before "and N more"


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "validate", help="check a task batch: schemas, paths, manifest hashes, files present"
    )
    p.add_argument("--tasks", required=True, type=Path, help="task batch directory")
    p.add_argument("--no-verify", action="store_true", help="skip the manifest hashes")
    p.add_argument("--json", action="store_true", help="print the checks as JSON on stdout")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    found = check_batch(args.tasks, verify=not args.no_verify)
    if args.json:
        payload = {
            "ok": found.ok,
            "manifest_problems": list(found.manifest_problems),
            "tasks": [asdict(task) for task in found.tasks],
        }
        print(json.dumps(payload, indent=2))
    else:
        err_console().print(checks_table(found))
        _print_manifest(found)
    total = len(found.tasks)
    problems = len(found.manifest_problems)
    tail = f"; {problems} manifest problem(s)" if problems else ""
    err_console().print(f"{total - found.refused} of {total} tasks valid{tail}")
    return 0 if found.ok else 2


def checks_table(found: BatchCheck) -> Table:
    table = Table(title=f"{found.root}")
    table.add_column("task", overflow="fold")
    table.add_column("target", overflow="fold")
    table.add_column("status")
    table.add_column("problem", overflow="fold")
    for task in found.tasks:
        status = "[green]ok" if task.problem is None else "[red]refused"
        table.add_row(task.task_id, task.symbol, status, escape(task.problem or ""))
    return table


def _print_manifest(found: BatchCheck) -> None:
    console = err_console()
    for line in found.manifest_problems[:SHOWN]:
        console.print(f"[red]manifest:[/] {escape(line)}", soft_wrap=True)
    more = len(found.manifest_problems) - SHOWN
    if more > 0:
        console.print(f"[red]manifest:[/] and {more} more")
