"""In-process pieces of the CLI: tables, the progress display, the one-line error rule."""

from __future__ import annotations

import gc
import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from replicate import GRADER_VERSION
from replicate.cli import main as cli_main
from replicate.cli import progress as cli_progress
from replicate.cli.gen import funnel_table
from replicate.cli.run import agent_trouble, results_table
from replicate.core.records import (
    Funnel,
    FunnelStage,
    RepoTestsCount,
    ResultRow,
    Verdict,
    VerdictStatus,
)
from replicate.errors import ReplicateError
from replicate.scoring.batch_run import RunSummary


def _text(renderable: object) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=200, color_system=None).print(renderable)
    return buffer.getvalue()


def _row(task: str, reward: float | None, status: VerdictStatus = "graded") -> ResultRow:
    verdict = Verdict(
        task_id=task,
        reward=reward,
        status=status,
        reason="why",
        grader_version=GRADER_VERSION,
    )
    return ResultRow(
        task_id=task,
        reward=reward,
        status=status,
        reason="why",
        agent_status="ok",
        agent_exit_code=0,
        duration_s=2.0,
        verdict=verdict,
    )


def test_results_table_and_mean_reward() -> None:
    rows = (_row("a", 1.0), _row("b", 0.5), _row("c", None, "infra_error"))
    summary = RunSummary(rows=rows, resumed=2, symbols={"a": "pkg.mod.f", "b": "pkg.mod.g"})
    assert summary.mean_reward == 0.75  # infra errors are masked, not zeros
    text = _text(results_table(summary))
    assert "mean reward 0.750 over 3 attempts" in text
    assert "pkg.mod.f" in text and "1.000" in text and "infra_error" in text
    assert "2 attempt(s) kept from an earlier run" in text
    assert RunSummary(rows=(), resumed=0, symbols={}).mean_reward == 0.0


def test_results_table_shows_repo_tests_only_when_run() -> None:
    assert "repo tests" not in _text(results_table(RunSummary((_row("a", 1.0),), 0, {})))
    tested = _row("a", 0.5)
    counts = RepoTestsCount(selected=4, passed=3, failed=1)
    verdict = tested.verdict.model_copy(update={"repo_tests": counts})
    tested = tested.model_copy(update={"verdict": verdict})
    text = _text(results_table(RunSummary((tested, _row("b", 0.0)), 0, {})))
    assert "repo tests" in text and "3/4" in text


def test_funnel_table() -> None:
    stages = (
        FunnelStage(stage="extracted", count=9),
        FunnelStage(stage="traced", count=5, drops=(("not called by the tests", 4),)),
    )
    text = _text(funnel_table(Funnel(repo="lib", commit="0123456789abcdef", stages=stages)))
    assert "lib @ 0123456789ab" in text
    assert "not called by the tests (4)" in text


def test_progress_leaves_nothing_behind_on_error(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=100)
    monkeypatch.setattr(cli_progress, "err_console", lambda: console)
    with pytest.raises(ReplicateError), cli_progress.RichProgress() as progress:
        progress.stage("acquiring something")
        raise ReplicateError("nope")
    assert buffer.getvalue() == ""
    with cli_progress.RichProgress() as progress:
        progress.stage("a stage", total=2)
        progress.advance(2)
    assert "a stage" in buffer.getvalue()


class _Boom:
    """A subcommand whose handler fails with a long, multi-line ReplicateError."""

    @staticmethod
    def register(sub: Any) -> None:
        sub.add_parser("boom").set_defaults(handler=_Boom.handle)

    @staticmethod
    def handle(args: object) -> int:
        raise ReplicateError("cannot clone x:\n  fatal: bad\n\n  more " + "word " * 40)


def test_error_message_is_one_unwrapped_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_main, "SUBCOMMANDS", (_Boom,))
    assert cli_main.main(["boom"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) > 200
    assert err.startswith("error: cannot clone x: fatal: bad more word word")


class _Seen:
    """A subcommand whose handler notes the collector's thresholds it runs under."""

    thresholds: tuple[int, ...] = ()

    @staticmethod
    def register(sub: Any) -> None:
        sub.add_parser("seen").set_defaults(handler=_Seen.handle)

    @staticmethod
    def handle(args: object) -> int:
        _Seen.thresholds = gc.get_threshold()
        return 0


def test_subcommands_run_with_the_collector_s_raised_thresholds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = gc.get_threshold()
    monkeypatch.setattr(cli_main, "SUBCOMMANDS", (_Seen,))
    try:
        gc.set_threshold(700, 10, 10)  # the interpreter's defaults: the control
        assert cli_main.main(["seen"]) == 0
    finally:
        gc.set_threshold(*before)
    assert _Seen.thresholds == cli_main.COLLECTOR_THRESHOLDS != (700, 10, 10)


def test_agents_that_failed_to_run_are_named_with_the_end_of_their_stderr(tmp_path: Path) -> None:
    ok = _row("a", 1.0)
    failed = _row("b", 0.0).model_copy(update={"agent_status": "error", "agent_exit_code": 2})
    slow = _row("c", 0.0).model_copy(update={"agent_status": "timeout", "agent_exit_code": None})
    assert agent_trouble((ok,), tmp_path, 600) is None
    log = tmp_path / "logs" / "b" / "0.stderr"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"...\npython: can't open file '/home/me/agent.py': [Errno 2] No such\n")
    line = agent_trouble((ok, failed, slow), tmp_path, 600)
    assert line is not None
    assert "1 of 3 agent run(s) exited non-zero (exit code 2)" in line
    assert "stderr ends: python: can't open file '/home/me/agent.py'" in line
    assert "--mount" in line
    assert "1 of 3 agent run(s) stopped at --timeout 600 s" in line
    log.write_bytes(b"ValueError: the model said no\n")  # no hint where no file is missing
    line = agent_trouble((failed,), tmp_path, 600)
    assert line is not None and "--mount" not in line and "the model said no" in line
