"""RUN_DIR bookkeeping: claiming and locking a run directory, reading, appending and repairing
result rows."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from replicate import GRADER_VERSION
from replicate.core.records import ResultRow, Verdict, VerdictStatus
from replicate.errors import ReplicateError
from replicate.scoring.results import (
    RESULTS_FILE,
    RUN_FILE,
    TORN_FILE,
    ResultLog,
    RunIdentity,
    claim_run_dir,
    load_rows,
    locked_run_dir,
    repair_results,
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
    with locked_run_dir(out):
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


def test_a_file_is_refused_as_run_dir(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with (
        pytest.raises(ReplicateError, match=r"cannot use .* as a run directory"),
        locked_run_dir(tmp_path / "file"),
    ):
        pass


def test_a_locked_run_dir_is_refused_with_the_holders_pid(tmp_path: Path) -> None:
    with locked_run_dir(tmp_path):
        with pytest.raises(ReplicateError) as info, locked_run_dir(tmp_path):
            pass
        message = str(info.value)
        assert "\n" not in message and f"pid {os.getpid()}" in message and "--out" in message
    with locked_run_dir(tmp_path):  # released at the end of the block: free again
        pass


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


def test_a_torn_last_line_is_moved_aside_and_the_file_stays_strict_jsonl(tmp_path: Path) -> None:
    log = ResultLog(tmp_path)
    log.append([_row("a")])
    cut = _row("b", reason="naïve → résumé").model_dump_json().encode("utf-8")
    arrow = cut.index("→".encode())
    with (tmp_path / RESULTS_FILE).open("ab") as handle:
        handle.write(cut[: arrow + 1])  # a crash cut it inside a multi-byte character
    with pytest.raises(UnicodeDecodeError):  # the control: a strict reader rejects the file
        [json.loads(line) for line in (tmp_path / RESULTS_FILE).read_text().splitlines()]
    assert repair_results(tmp_path) == 1
    assert (tmp_path / TORN_FILE).read_bytes() == cut[: arrow + 1] + b"\n"
    assert set(load_rows(tmp_path)) == {("a", 0)}
    log.append([_row("c")])
    lines = (tmp_path / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["task_id"] for line in lines] == ["a", "c"]
    assert repair_results(tmp_path) == 0  # a whole file is left as it is


def test_a_torn_line_in_the_middle_is_moved_aside_too(tmp_path: Path) -> None:
    whole = _row("a").model_dump_json()
    (tmp_path / RESULTS_FILE).write_text(whole + "\n" + whole[:40] + "\n" + whole + "\n")
    assert repair_results(tmp_path) == 1
    assert len((tmp_path / RESULTS_FILE).read_text().splitlines()) == 2


def test_non_ascii_reasons_round_trip(tmp_path: Path) -> None:
    ResultLog(tmp_path).append([_row("a", reason="got 'é' → expected 'e'")])
    assert load_rows(tmp_path)[("a", 0)].reason == "got 'é' → expected 'e'"
