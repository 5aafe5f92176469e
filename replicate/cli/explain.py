"""`replicate explain --tasks DIR [SYMBOL]`: why a target did or did not become a task (from the
batch's `funnel.jsonl`), or, without SYMBOL, every drop reason counted per stage."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from replicate.cli.console import err_console
from replicate.core import DropReason, LedgerEntry
from replicate.errors import ReplicateError
from replicate.gen import (
    LEDGER,
    Explanation,
    NoLedger,
    NoMatch,
    StageTally,
    explain,
    find,
    outcomes,
    tally,
)


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "explain",
        help="why a target did or did not become a task; without SYMBOL, why targets drop",
    )
    p.add_argument("--tasks", required=True, type=Path, help="task batch directory")
    p.add_argument(
        "symbol",
        nargs="?",
        metavar="SYMBOL",
        help="a target's dotted name, or the end or a part of it that only it has",
    )
    p.add_argument("--json", action="store_true", help="print the answer as JSON on stdout")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    batch: Path = args.tasks
    if not batch.is_dir():
        raise ReplicateError(f"--tasks {batch} is not a directory")
    try:
        entries = outcomes(batch)
        if args.symbol is None:
            return _summary(batch, entries, args.json)
        found = explain(batch, find(entries, args.symbol))
    except NoLedger as exc:
        raise ReplicateError(
            f"{exc}: the batch was minted before gen kept a ledger of its targets; mint it "
            "again with `replicate gen` to explain its targets"
        ) from None
    except NoMatch as exc:
        raise ReplicateError(str(exc)) from None
    if args.json:
        print(json.dumps(_payload(found), indent=2))
    else:
        _print_one(found)
    return 0


def _payload(found: Explanation) -> dict[str, Any]:
    entry = found.entry
    return {
        "symbol": entry.symbol,
        "repo": entry.repo,
        "commit": entry.commit,
        "reached": entry.stage,
        "kept": entry.kept,
        "dropped_at": found.dropped_at,
        "reason": entry.reason,
        "reason_code": None if entry.drop_reason is None else entry.drop_reason.name,
        "detail": entry.detail,
        "task_id": entry.task_id,
        "spec_dir": None if found.spec_dir is None else str(found.spec_dir),
        "hidden_dir": None if found.hidden_dir is None else str(found.hidden_dir),
    }


def _print_one(found: Explanation) -> None:
    entry = found.entry
    lines = [
        f"[bold]{escape(entry.symbol)}[/]  ({escape(entry.repo)} @ {entry.commit[:12]})",
        f"  reached:  {entry.stage}",
    ]
    if found.dropped_at is None:
        lines.append(f"  outcome:  [green]minted[/] as task {escape(entry.task_id or '')}")
        lines += _files(found)
    else:
        lines.append(f"  outcome:  [red]dropped[/] at {found.dropped_at}")
        lines.append(f"  reason:   {escape(entry.reason or '(none recorded)')}")
    if entry.detail:
        lines.append(f"  detail:   {escape(entry.detail)}")
    for line in lines:
        err_console().print(line, soft_wrap=True)


def _files(found: Explanation) -> list[str]:
    if found.spec_dir is None or found.hidden_dir is None:
        return ["  files:    [red]missing[/] (the task was removed from the batch since)"]
    return [
        f"  public:   {escape(str(found.spec_dir))}  (what the agent sees)",
        f"  hidden:   {escape(str(found.hidden_dir))}  (reference, inputs, expected outcomes)",
    ]


def _summary(batch: Path, entries: list[LedgerEntry], as_json: bool) -> int:
    stages = tally(entries)
    tasks = sum(1 for e in entries if e.kept)
    if as_json:
        payload = {
            "batch": str(batch),
            "repos": sorted({e.repo for e in entries}),
            "targets": len(entries),
            "tasks": tasks,
            "stages": [
                {
                    "stage": s.stage,
                    "kept": s.kept,
                    "drops": [
                        {"reason": why, "code": DropReason.of(why).name, "count": n}
                        for why, n in s.drops
                    ],
                }
                for s in stages
            ],
        }
        print(json.dumps(payload, indent=2))
        return 0
    err_console().print(reasons_table(batch, stages))
    err_console().print(
        f"{tasks} of {len(entries)} targets became tasks; `replicate explain --tasks {batch} "
        "SYMBOL` says why one did not",
        soft_wrap=True,
        markup=False,
    )
    return 0


def reasons_table(batch: Path, stages: tuple[StageTally, ...]) -> Table:
    table = Table(title=f"why targets drop: {escape(str(batch / LEDGER))}")
    table.add_column("stage")
    table.add_column("kept", justify="right")
    table.add_column("dropped", justify="right")
    table.add_column("reason", overflow="fold")
    for stage in stages:
        if not stage.drops:
            table.add_row(stage.stage, str(stage.kept), "", "")
        for n, (why, count) in enumerate(stage.drops):
            first = n == 0
            table.add_row(
                stage.stage if first else "",
                str(stage.kept) if first else "",
                str(count),
                escape(why),
            )
    return table
