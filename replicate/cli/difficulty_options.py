"""`--difficulty` and `--max-solve-rate`: choosing a batch's tasks by difficulty, shared by
`run` and `export`."""

from __future__ import annotations

import argparse

from replicate.batch import parse_bands
from replicate.cli import numbers
from replicate.core import BANDS, Band


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


def difficulty_filters(args: argparse.Namespace) -> tuple[tuple[Band, ...], float | None]:
    """The bands and the solve-rate bound asked for (one-line errors)."""
    return parse_bands(args.difficulty), args.max_solve_rate
