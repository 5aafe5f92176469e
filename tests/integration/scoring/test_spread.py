"""`run` through an executor other than the local threads: each attempt handed over as a
picklable piece of work, its row logged here; the rows equal those of the local executor."""

from __future__ import annotations

import pickle
import shlex
from pathlib import Path

import pytest

from replicate.agents.protocol import AgentConfig
from replicate.executors import EXECUTORS
from replicate.grading.grader import original_source
from replicate.sandbox import get_sandbox
from replicate.scoring.batch_run import RunOptions, RunSummary, _Attempts, run_batch
from replicate.scoring.results import load_rows
from tests.integration.minted import Tiny
from tests.unit.executors.fake import FakeExecutor

CLAMP = "tinypkg.core.clamp"


def options(tiny: Tiny, out: Path, answers: Path, executor: str) -> RunOptions:
    answer = shlex.quote(str(answers / "core.py"))
    command = (  # right for clamp, nothing for the others
        f'if [ "$REPLICATE_TARGET" = {CLAMP} ]; then '
        f'cp {answer} "$REPLICATE_WORKSPACE/$REPLICATE_TARGET_FILE"; fi'
    )
    agent = AgentConfig(command, get_sandbox("local"), timeout_s=60, mounts=(str(answers),))
    return RunOptions(
        tasks=tiny.batch_dir, out=out, agent=agent, sandbox_name="local", executor=executor
    )


def test_spread_attempts_give_the_local_rows(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / "core.py").write_bytes(original_source(tiny.task(CLAMP)))
    fake = FakeExecutor()
    monkeypatch.setitem(EXECUTORS, "fake", lambda parallel, address: fake)

    local = run_batch(options(tiny, tmp_path / "local", answers, "local"))
    spread = run_batch(options(tiny, tmp_path / "spread", answers, "fake"))

    assert len(fake.items) == len(tiny.task_ids)  # every attempt went through the executor
    assert fake.closed
    assert _graded(spread) == _graded(local)
    assert sorted({r.reward for r in local.rows}) == [0.0, 1.0]  # clamp right, the others not
    assert set(load_rows(tmp_path / "spread")) == {(r.task_id, 0) for r in spread.rows}


def test_the_work_pickles(tiny: Tiny, tmp_path: Path) -> None:
    work = _Attempts(options(tiny, tmp_path / "run", tmp_path, "ray"))
    assert pickle.loads(pickle.dumps(work)).options.tasks == work.options.tasks


def _graded(summary: RunSummary) -> list[tuple[str, str, float | None]]:
    return [(r.task_id, r.status, r.reward) for r in summary.rows]
