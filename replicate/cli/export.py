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
from replicate.cli.difficulty_options import (
    add_difficulty_arguments,
    add_kinds_argument,
    difficulty_filters,
    kinds_filter,
)
from replicate.core import prompt, prompt_lengths, splits
from replicate.errors import ReplicateError
from replicate.exporters import EXPORTERS, ExportOptions, ExportPlan, Written, exporter, plan_export

OUT_HELP = "output path (rows: PATH.parquet, PATH.jsonl; inspect, harbor: an empty folder)"
BUILD_HELP = "harbor: also build and tag every task's images locally (docker)"
NO_VERIFY_HELP = "trust the batch as it is: skip checking its files against its manifest"
CONTEXT_HELP = (
    "how much of the target file a row's prompt shows: file (as written, other tasks' bodies "
    "too), class (the definition that holds the target), signatures (the file with every task's "
    "body stubbed; the default for rows); inspect and harbor show the repository: file"
)
SPLIT_BY_HELP = (
    "assign each task train or test by the hash of its group (file, module folder or "
    "repository), tasks whose prompts show each other kept together; rows: PATH.train.* and "
    "PATH.test.*"
)


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
    add_kinds_argument(p)
    p.add_argument("--context", choices=[c.value for c in prompt.Context], help=CONTEXT_HELP)
    split_help = "split name recorded in every row (default train)"
    p.add_argument("--split", metavar="NAME", help=split_help)
    p.add_argument("--split-by", choices=[s.value for s in splits.SplitBy], help=SPLIT_BY_HELP)
    ratio, seed = "--split-by: the test share of the tasks (0.1)", "--split-by: hash salt (0)"
    p.add_argument("--test-ratio", type=numbers.rate, metavar="R", help=ratio)
    p.add_argument("--split-seed", type=numbers.amount, metavar="N", help=seed)
    p.add_argument("--build-images", action="store_true", help=BUILD_HELP)
    p.add_argument("--no-verify", action="store_true", help=NO_VERIFY_HELP)
    p.add_argument("--json", action="store_true", help="print what was written as JSON on stdout")
    p.set_defaults(handler=handle)


def options_from(args: argparse.Namespace, folder: bool) -> ExportOptions:
    """The export options the command line asks for; a one-line error for a combination that
    does not hold together."""
    if args.build_images and args.format != "harbor":
        raise ReplicateError("--build-images applies to --format harbor only")
    if folder and args.context not in (None, prompt.Context.FILE.value):
        raise ReplicateError(
            f"--context {args.context} applies to --format rows only: an {args.format} "
            "workspace is the repository itself, run and graded as such (--split-by keeps "
            "tasks that see each other on one side)"
        )
    if args.split_by is None and (args.test_ratio is not None or args.split_seed is not None):
        raise ReplicateError("--test-ratio and --split-seed apply with --split-by only")
    if args.split_by is not None and args.split is not None:
        raise ReplicateError(
            "--split names one split for every row; --split-by assigns train "
            "and test: give one of them"
        )
    default = prompt.Context.FILE if folder else prompt.Context.SIGNATURES
    return ExportOptions(
        split=args.split or splits.TRAIN,
        build_images=args.build_images,
        context=prompt.Context(args.context) if args.context else default,
        split_by=splits.SplitBy(args.split_by) if args.split_by else None,
        test_ratio=0.1 if args.test_ratio is None else args.test_ratio,
        split_seed=args.split_seed or 0,
    )


def handle(args: argparse.Namespace) -> int:
    chosen = exporter(args.format)  # an unknown format fails before the batch is read
    options = options_from(args, folder=chosen.workdir is not None)
    bands, bound = difficulty_filters(args)
    kinds = kinds_filter(args)
    batch = Batch.open(args.tasks, verify=not args.no_verify)
    task_ids = choose(batch, args.task, args.limit, bands, bound, kinds)
    plan = plan_export(batch, task_ids, options, workdir=chosen.workdir)
    written = chosen.export(batch, plan, args.out, options)
    if args.json:
        payload = summary(args.format, written, plan)
        payload["warnings"] = [*export_warnings(plan, options), *written.warnings]
        if chosen.workdir is not None:  # instructions, not a trainer's prompts
            del payload["prompt_lengths"]["settings"]
        print(json.dumps(payload, indent=2))
    else:
        console = err_console()
        console.print(_table(args.format, written, plan))
        console.print(_lengths_table(plan.lengths, rows=chosen.workdir is None))
        for line in (*export_warnings(plan, options), *written.warnings):
            console.print(f"warning: {line}", soft_wrap=True)
    return 0


def summary(name: str, written: Written, plan: ExportPlan) -> dict[str, Any]:
    """What `--json` prints: the files, the context, the splits, what prompts show, lengths (the
    handler adds the warnings, one line each, as a terminal shows them)."""
    showing = [item for item in plan.tasks if item.visible]
    return {
        "format": name,
        "tasks": written.tasks,
        "files": [str(path) for path in written.files],
        "context": plan.context.value,
        "splits": plan.split_counts(),
        "visible": {
            "tasks_showing_hidden_bodies": len(showing),
            "pairs": sum(len(item.visible) for item in plan.tasks),
            "cross_split_pairs": len(cross_split(plan)),
        },
        "prompt_lengths": plan.lengths.as_json(),
    }


def cross_split(plan: ExportPlan) -> list[tuple[str, str]]:
    """(task, shown task) pairs of the export that lie on different sides of the split."""
    where = {item.task.id: item.placement.split for item in plan.tasks}
    return [
        (item.task.id, other)
        for item in plan.tasks
        for other in item.visible
        if other in where and where[other] != where[item.task.id]
    ]


def export_warnings(plan: ExportPlan, options: ExportOptions) -> list[str]:
    """What the export should tell: a split with an empty side, hidden bodies left unsplit."""
    found = []
    counts = plan.split_counts()
    groups = {item.placement.group for item in plan.tasks}
    if options.split_by is not None and len(counts) < 2 and len(groups) == 1:
        found.append(
            f"every task went to {next(iter(counts))}: the {len(plan.tasks)} tasks are one "
            "group once tasks shown each other's hidden bodies are kept together; none can be "
            "held out without a leak"
        )
    elif options.split_by is not None and len(counts) < 2 and plan.tasks:
        found.append(
            f"every task went to {next(iter(counts))}: the {len(groups)} groups give no split "
            f"at a test ratio of {options.test_ratio}; try another ratio or --split-seed"
        )
    showing = sum(1 for item in plan.tasks if item.visible)
    if showing and options.split_by is None:
        found.append(
            f"{showing} of {len(plan.tasks)} prompts show other tasks' hidden bodies "
            "(visible_task_ids): split with --split-by, not by row"
        )
    return found


def _table(name: str, written: Written, plan: ExportPlan) -> Table:
    splits_text = ", ".join(f"{k} {v}" for k, v in plan.split_counts().items())
    title = f"export ({name}, context {plan.context.value}): {written.tasks} task(s): {splits_text}"
    table = Table(title=title)
    table.add_column("file", overflow="fold")
    for path in written.files:
        table.add_row(str(path))
    return table


def _lengths_table(measured: prompt_lengths.PromptLengths, rows: bool) -> Table:
    """The lengths of the rows' prompts (with the verl settings they imply) or of the folder
    formats' instructions."""
    per = prompt_lengths.CHARS_PER_TOKEN
    what = "prompt" if rows else "instruction"
    title = f"{what} lengths ({measured.prompts} {what}s; tokens ~ chars / {per})"
    table = Table(title=title)
    table.add_column("")
    for p in prompt_lengths.PERCENTILES:
        table.add_column(f"p{p}", justify="right")
    table.add_row("characters", *(str(measured.chars[p]) for p in prompt_lengths.PERCENTILES))
    table.add_row("tokens (est.)", *(str(measured.tokens[p]) for p in prompt_lengths.PERCENTILES))
    if rows:
        settings = " ".join(f"{k}={v}" for k, v in measured.settings().items())
        table.caption = f"verl: {settings}"
    return table
