"""`run --workers` defaults to the cores the process may use, `gen --workers` to twice that;
`--cold` turns warm grading off."""

from __future__ import annotations

import os

import pytest

from replicate.cli.main import build_parser, main
from replicate.cli.run import default_workers


def test_workers_default_to_the_cores_and_cold_is_off() -> None:
    args = build_parser().parse_args(["run", "--tasks", "t", "--agent", "true", "--out", "o"])
    assert args.workers == default_workers() == len(os.sched_getaffinity(0))
    assert args.cold is False
    cold = build_parser().parse_args(
        ["run", "--tasks", "t", "--agent", "true", "--out", "o", "--cold", "--workers", "3"]
    )
    assert (cold.cold, cold.workers) == (True, 3)


def test_zero_workers_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["run", "--tasks", "t", "--agent", "true", "--out", "o", "--workers", "0"])
    err = capsys.readouterr().err.strip()
    assert stopped.value.code == 2
    assert err == (
        "error: argument --workers: a whole number of 1 or more, not '0' "
        "(see `replicate run --help`)"
    )


def test_gen_mints_twice_as_many_targets_at_once_as_there_are_cores() -> None:
    args = build_parser().parse_args(["gen", "--repo", "r", "--out", "o"])
    assert args.workers == 2 * len(os.sched_getaffinity(0))
    assert (
        build_parser().parse_args(["gen", "--repo", "r", "--out", "o", "--workers", "1"]).workers
        == 1
    )
