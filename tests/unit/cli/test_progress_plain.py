"""Progress off a terminal: plain lines at each stage and every few seconds while one runs."""

from __future__ import annotations

import io
import time

import pytest
from rich.console import Console

from replicate.cli import progress as cli_progress


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_lines_say_stage_done_of_total_tasks_and_elapsed() -> None:
    lines: list[str] = []
    clock = _Clock()
    with cli_progress.PlainProgress(every=10, write=lines.append, clock=clock) as progress:
        progress.stage("acquiring")
        clock.now += 2
        progress.stage("harvesting")  # in the first 10 s: held back
        clock.now += 10
        progress.stage("minting", total=40)
        progress.advance(3)
        progress.tasks(2)
        clock.now += 30
    assert lines == [
        "[12 s] minting: 0 of 40 done",
        "[42 s] minting: 3 of 40 done, 2 tasks so far",  # at the end, once
    ]


def test_a_run_refused_at_once_leaves_no_progress_line() -> None:
    lines: list[str] = []
    with pytest.raises(ValueError), cli_progress.PlainProgress(write=lines.append) as progress:
        progress.stage("acquiring /no/such/path")
        raise ValueError("no such repository")
    assert lines == []


def test_a_line_comes_every_few_seconds_while_a_stage_runs() -> None:
    lines: list[str] = []
    with cli_progress.PlainProgress(every=0.02, write=lines.append) as progress:
        progress.stage("a long harvest")
        time.sleep(0.3)
    assert len(lines) >= 5 and all("a long harvest" in line for line in lines)
    # positive control: without the ticker only the line at the end is written
    quiet: list[str] = []
    with cli_progress.PlainProgress(every=3600, write=quiet.append) as progress:
        progress.stage("a long harvest")
        time.sleep(0.1)
    assert len(quiet) == 1


def test_off_a_terminal_or_with_json_the_plain_display_is_chosen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    piped = Console(file=io.StringIO())
    monkeypatch.setattr(cli_progress, "err_console", lambda: piped)
    assert isinstance(cli_progress.progress_display(plain=False), cli_progress.PlainProgress)
    terminal = Console(file=io.StringIO(), force_terminal=True)
    monkeypatch.setattr(cli_progress, "err_console", lambda: terminal)
    assert isinstance(cli_progress.progress_display(plain=False), cli_progress.RichProgress)
    assert isinstance(cli_progress.progress_display(plain=True), cli_progress.PlainProgress)
