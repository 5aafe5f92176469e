"""`--difficulty`, `--max-solve-rate` and `--kinds`: choosing a batch's tasks by difficulty and
task kind, shared by `run` and `export`."""

from __future__ import annotations

import argparse

from replicate.batch import parse_bands
from replicate.cli import numbers
from replicate.core import BANDS, Band, TaskKind
from replicate.errors import ReplicateError


def add_difficulty_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--difficulty",
        action="append",
        default=[],
        metavar="BAND",
        help=f"only tasks of this difficulty band ({', '.join(BANDS)}; repeatable or a comma list)",
    )
    p.add_argument(
        "--max-solve-rate",
        type=numbers.rate,
        metavar="X",
        help="only tasks whose recorded solve rate is at most X (see `report --write-solve-rate`)",
    )


def add_kinds_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--kinds",
        metavar="KINDS",
        help="only tasks of these task kinds (comma list: function, method, class, module)",
    )


def kinds_filter(args: argparse.Namespace) -> frozenset[TaskKind]:
    """The task kinds asked for (empty: all), or a one-line error."""
    if args.kinds is None:
        return frozenset()
    try:
        return TaskKind.parse(args.kinds)
    except ValueError as exc:
        raise ReplicateError(f"--kinds: {exc}") from None


def difficulty_filters(args: argparse.Namespace) -> tuple[tuple[Band, ...], float | None]:
    """The bands and the solve-rate bound asked for (one-line errors)."""
    return parse_bands(args.difficulty), args.max_solve_rate
