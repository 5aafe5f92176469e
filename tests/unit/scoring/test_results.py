"""RUN_DIR bookkeeping: claiming a run directory, reading and appending result rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replicate import GRADER_VERSION
from replicate.core.records import ResultRow, Verdict, VerdictStatus
from replicate.errors import ReplicateError
from replicate.scoring.results import (
    RESULTS_FILE,
    RUN_FILE,
    ResultLog,
    RunIdentity,
    claim_run_dir,
    load_rows,
)

IDENTITY = RunIdentity(tasks="/b", agent="python agent.py", sandbox="local", samples=1)


def _row(task: str, sample: int = 0, reward: float | None = 0.5, reason: str = "r") -> ResultRow:
    status: VerdictStatus = "graded" if reward is not None else "infra_error"
    verdict = Verdict(
        task_id=task, reward=reward, status=status, reason=reason, grader_version=GRADER_VERSION
    )
    return ResultRow(
        task_id=task,
        sample=sample,
        reward=reward,
        status=status,
        reason=reason,
        agent_status="ok",
        agent_exit_code=0,
        duration_s=1.0,
        verdict=verdict,
    )


def test_claim_creates_then_accepts_the_same_run(tmp_path: Path) -> None:
    out = tmp_path / "a" / "run"
    claim_run_dir(out, IDENTITY)
    assert json.loads((out / RUN_FILE).read_text()) == {
        "tasks": "/b",
        "agent": "python agent.py",
        "sandbox": "local",
        "samples": 1,
    }
    claim_run_dir(out, IDENTITY)  # resuming the same run is fine


@pytest.mark.parametrize(
    ("field", "value"),
    [("agent", "other agent"), ("tasks", "/elsewhere"), ("sandbox", "plain"), ("samples", 4)],
)
def test_claim_refuses_a_different_run(tmp_path: Path, field: str, value: object) -> None:
    claim_run_dir(tmp_path, IDENTITY)
    changed = RunIdentity(**{**IDENTITY.__dict__, field: value})
    with pytest.raises(ReplicateError) as info:
        claim_run_dir(tmp_path, changed)
    message = str(info.value)
    assert "\n" not in message and f"different {field}" in message and "--out" in message


def test_claim_refuses_a_file_that_is_not_a_run_record(tmp_path: Path) -> None:
    (tmp_path / RUN_FILE).write_text('{"something": "else"}')
    with pytest.raises(ReplicateError, match="not a run record"):
        claim_run_dir(tmp_path, IDENTITY)
    (tmp_path / RUN_FILE).write_text("not json")
    with pytest.raises(ReplicateError, match="not a run record"):
        claim_run_dir(tmp_path, IDENTITY)


def test_claim_refuses_a_file_as_run_dir(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ReplicateError, match=r"cannot use .* as a run directory"):
        claim_run_dir(tmp_path / "file", IDENTITY)


def test_load_rows_without_results(tmp_path: Path) -> None:
    assert load_rows(tmp_path) == {}


def test_last_row_wins_per_task_and_sample(tmp_path: Path) -> None:
    log = ResultLog(tmp_path)
    log.append([_row("a", reward=None), _row("b"), _row("a", sample=1, reward=0.1)])
    log.append([_row("a", reward=1.0)])
    rows = load_rows(tmp_path)
    assert set(rows) == {("a", 0), ("a", 1), ("b", 0)}
    assert rows[("a", 0)].reward == 1.0 and rows[("a", 0)].status == "graded"
    assert rows[("a", 1)].reward == 0.1


def test_truncated_last_line_is_skipped_and_the_next_row_survives(tmp_path: Path) -> None:
    log = ResultLog(tmp_path)
    log.append([_row("a")])
    cut = _row("b", reason="naïve → résumé").model_dump_json().encode("utf-8")
    arrow = cut.index("→".encode())
    with (tmp_path / RESULTS_FILE).open("ab") as handle:
        handle.write(cut[: arrow + 1])  # cut inside a multi-byte character
    assert set(load_rows(tmp_path)) == {("a", 0)}
    log.append([_row("c")])  # appended after the broken line, on a line of its own
    assert set(load_rows(tmp_path)) == {("a", 0), ("c", 0)}
    assert (tmp_path / RESULTS_FILE).read_bytes().endswith(b"\n")


def test_non_ascii_reasons_round_trip(tmp_path: Path) -> None:
    ResultLog(tmp_path).append([_row("a", reason="got 'é' → expected 'e'")])
    assert load_rows(tmp_path)[("a", 0)].reason == "got 'é' → expected 'e'"
