"""`run` starts a target file's sessions a few attempts before that file's first attempt, so its
grade does not wait for them to start (an agent quicker than a session's start, as a scripted
one is, waited ~60-90 ms on each new file).  Bundled batch, two tasks of each of three files,
one worker, an agent that leaves the stub; the control runs without the lookahead."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from replicate.agents.protocol import AgentConfig
from replicate.batch import Batch
from replicate.jail import CandidateSessions
from replicate.sandbox import get_sandbox
from replicate.scoring import batch_run
from replicate.scoring.batch_run import RunOptions, run_batch

ROOT = Path(__file__).resolve().parents[3]


def _tasks() -> tuple[tuple[str, ...], list[str]]:
    """Two tasks of each of three target files, and the files in the order `run` takes them."""
    batch = Batch.open(ROOT)
    by_file: dict[str, list[str]] = {}
    for ident in batch.select((), None):
        by_file.setdefault(batch.spec(ident).source.path, []).append(ident)
    files = [path for path, ids in by_file.items() if len(ids) >= 2][:3]
    assert len(files) == 3
    return tuple(i for path in files for i in by_file[path][:2]), files


def _events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ahead: int) -> list[tuple[str, str]]:
    """("ready", file) when a session is started for a file, ("attempt", file) when an attempt's
    workspace is made; in the order they happened."""
    ids, _ = _tasks()
    log: list[tuple[str, str]] = []
    start, make = CandidateSessions._start, batch_run.make_workspace

    def started(self: CandidateSessions, sandbox: Any, plan: Any, *args: Any) -> Any:
        log.append(("ready", plan.target.path))
        return start(self, sandbox, plan, *args)

    def workspace(task: Any, dest: Path) -> Path:
        log.append(("attempt", task.hidden.target.path))
        return make(task, dest)

    monkeypatch.setattr(CandidateSessions, "_start", started)
    monkeypatch.setattr(batch_run, "make_workspace", workspace)
    monkeypatch.setattr(batch_run, "AHEAD", ahead)
    agent = AgentConfig("true", get_sandbox("local"), timeout_s=60)
    options = RunOptions(
        tasks=ROOT, out=tmp_path / f"run{ahead}", agent=agent, sandbox_name="local", task_ids=ids
    )
    rows = run_batch(options).rows
    assert [r.reward for r in rows] == [0.0] * len(ids)  # the stub, graded
    return log


def _attempts_between(log: list[tuple[str, str]], path: str) -> int:
    """Attempts begun between the first session started for `path` and its first attempt."""
    ready = log.index(("ready", path))
    first = log.index(("attempt", path))
    return sum(1 for event, _ in log[ready:first] if event == "attempt")


def test_a_files_sessions_start_attempts_before_its_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, files = _tasks()
    with monkeypatch.context() as patches:
        ahead = _events(tmp_path, patches, 2)
    with monkeypatch.context() as patches:
        control = _events(tmp_path, patches, 0)
    # one worker: the files' attempts come one file after another; with the lookahead the
    # second and third files' sessions start two attempts before their first attempt
    assert [_attempts_between(ahead, path) for path in files] == [0, 2, 2]
    # control: each file's sessions start in its own first attempt
    assert [_attempts_between(control, path) for path in files] == [0, 0, 0]
    # and no more of them: the lookahead's sessions are the ones the attempts take
    assert ahead.count(("ready", files[2])) == control.count(("ready", files[2]))
    assert sum(e == "ready" for e, _ in ahead) == sum(e == "ready" for e, _ in control)
