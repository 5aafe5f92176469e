"""`run` grades as children of sealed sessions (bubblewrap; elsewhere in warm jails started while
the agent works): the same candidates earn the same verdicts so and cold, and the sessions and
pools end with the run."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from replicate.agents.protocol import AgentConfig
from replicate.core.records import ResultRow
from replicate.grading.grader import original_source
from replicate.jail import CandidateSessions
from replicate.jail.warm import WarmPool
from replicate.sandbox import get_sandbox
from replicate.scoring.batch_run import RunOptions, run_batch
from tests.integration.minted import Tiny

AGENT = (
    'f="$ANSWERS/$REPLICATE_TARGET.py"; if [ -f "$f" ]; then cp "$f" "$REPLICATE_TARGET_FILE"; fi'
)


@pytest.fixture(scope="module")
def answers(tiny: Tiny, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Whole target files per symbol: right (clamp), partly right (parse_int: no strip), and
    wrong (evens: odd numbers); Counter.add is left stubbed."""
    folder = tmp_path_factory.mktemp("answers")
    source = original_source(tiny.task("tinypkg.core.clamp")).decode()
    partly = source.replace("text = text.strip()", "text = text")
    wrong = source.replace("if n % 2 == 0:", "if n % 2 == 1:")
    assert partly != source and wrong != source
    for symbol, text in {
        "tinypkg.core.clamp": source,
        "tinypkg.core.parse_int": partly,
        "tinypkg.core.evens": wrong,
    }.items():
        (folder / f"{symbol}.py").write_text(text)
    return folder


def _run(tiny: Tiny, out: Path, answers: Path, *, warm: bool) -> tuple[ResultRow, ...]:
    agent = AgentConfig(
        f"ANSWERS={answers} && {AGENT}",
        get_sandbox("local"),
        timeout_s=60,
        mounts=(str(answers),),
    )
    options = RunOptions(
        tasks=tiny.batch_dir, out=out, agent=agent, sandbox_name="local", workers=2, warm=warm
    )
    return run_batch(options).rows


def _graded(row: ResultRow) -> tuple[object, ...]:
    v = row.verdict
    return (
        row.task_id,
        row.reward,
        row.status,
        row.reason,
        v.raw_reward,
        v.counts,
        v.counterexample,
    )


def test_warm_and_cold_runs_give_the_same_verdicts(
    tiny: Tiny, tmp_path: Path, answers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[object] = []
    forked: list[object] = []
    closed: list[object] = []
    take, run, close = WarmPool.take, CandidateSessions.run, CandidateSessions.close

    def counting_take(self: WarmPool, *args: object, **kwargs: object) -> object:
        taken.append(args[0])
        return take(self, *args, **kwargs)  # type: ignore[arg-type]

    def counting_run(self: CandidateSessions, *args: object, **kwargs: object) -> object:
        found = run(self, *args, **kwargs)  # type: ignore[arg-type]
        forked.append(found)
        return found

    def counting_close(self: CandidateSessions) -> None:
        closed.append(self)
        close(self)

    monkeypatch.setattr(WarmPool, "take", counting_take)
    monkeypatch.setattr(CandidateSessions, "run", counting_run)
    monkeypatch.setattr(CandidateSessions, "close", counting_close)
    cold = _run(tiny, tmp_path / "cold", answers, warm=False)
    assert taken == [] and forked == [] and closed == []
    warm = _run(tiny, tmp_path / "warm", answers, warm=True)
    assert [_graded(r) for r in warm] == [_graded(r) for r in cold]
    rewards = sorted(r.reward or 0.0 for r in warm)
    assert rewards[0] == 0.0 and rewards[-1] == 1.0
    assert any(0.0 < (r.reward or 0.0) < 1.0 for r in warm), [r.reason for r in warm]
    # every graded candidate ran in a session, none in a jail of its own; those that earned
    # anything ran a second time
    earned = sum((r.reward or 0.0) > 0 for r in warm)
    assert len(forked) == len(warm) + earned and None not in forked
    assert taken == []
    assert len(closed) == 1  # one set of sessions, closed when the run ended


def test_an_interrupted_run_closes_its_pools(
    tiny: Tiny, tmp_path: Path, answers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[object] = []
    close = WarmPool.close

    def counting_close(self: WarmPool) -> None:
        closed.append(self)
        close(self)

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    def counting_sessions_close(self: CandidateSessions) -> None:
        closed.append(self)
        sessions_close(self)

    sessions_close = CandidateSessions.close
    monkeypatch.setattr(WarmPool, "close", counting_close)
    monkeypatch.setattr(CandidateSessions, "close", counting_sessions_close)
    monkeypatch.setattr("replicate.scoring.batch_run.read_target", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _run(tiny, tmp_path / "run", answers, warm=True)
    assert len(closed) == 2  # the pool and the sessions
    for kind in ("warm", "session"):
        assert not list(Path(tempfile.gettempdir()).glob(f"replicate-{kind}-*{os.getpid()}*"))
