"""A session (`replicate.jail.session`): one jail forking a child per run of our own programs,
and a target's sessions at gen time (`replicate.jail.series.TargetSessions`)."""

from __future__ import annotations

import os

from replicate.core import GradingSettings
from replicate.gen.strength import wrong_answer
from replicate.grading.grader import original_source
from replicate.jail.calls import JailRun, RepoContext, RunPlan, run_calls
from replicate.jail.sandbox import get_sandbox
from replicate.jail.sandbox.base import WarmStart
from replicate.jail.series import TargetSessions
from replicate.jail.session import Session
from tests.integration.minted import Tiny

PID = b"\n\nimport os\n\ndef clamp(value, low, high):\n    return os.getpid()\n"
WRONG_AFTER_TWO = (
    b"\n\n_SEEN = []\n\n"
    b"def clamp(value, low, high):\n"
    b"    _SEEN.append(value)\n"
    b"    return value if len(_SEEN) <= 2 else 'wrong'\n"
)
KILLS_ITS_SESSION = b"\n\nimport os, signal\n\nos.kill(os.getppid(), signal.SIGKILL)\n"


def _local() -> WarmStart:
    sandbox = get_sandbox("local")
    assert isinstance(sandbox, WarmStart)
    return sandbox


def _first_value(run: JailRun | None) -> object:
    assert run is not None and run.parsed.outcomes
    outcomes = run.parsed.outcomes
    return outcomes[min(outcomes)]["value"]["v"]


def _pid_in(tiny: Tiny, ctx: RepoContext, hash_seed: int, shift: int) -> object:
    task = tiny.task("tinypkg.core.clamp")
    settings = task.hidden.grading
    plan = RunPlan(ctx, task.hidden.target, settings, hash_seed, shift)
    with Session(_local(), plan) as session:
        (run,) = session.run_all(task.inputs[:1], settings, [original_source(task) + PID])
    return _first_value(run)


def test_children_of_sessions_of_other_seeds_have_other_pids(
    tiny: Tiny, tiny_ctx: RepoContext
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    alone = run_calls(
        tiny_ctx,
        task.hidden.target,
        task.inputs[:1],
        _local(),
        task.hidden.grading,
        override=original_source(task) + PID,
    )
    # the control: a session's children are alike from one session to the next of the same
    # seed, so without the skipped pids the golden runs' two sessions would agree on a pid
    # that a jail of its own (pid 2) never gives
    same = {_pid_in(tiny, tiny_ctx, 1, 0) for _ in range(2)}
    other = _pid_in(tiny, tiny_ctx, 2, 30)
    assert _first_value(alone) == "2"
    assert len(same) == 1 and "2" not in same
    assert other not in same and other != "2"


def test_until_kills_the_child_and_the_next_run_goes_on(tiny: Tiny, tiny_ctx: RepoContext) -> None:
    task = tiny.task("tinypkg.core.clamp")
    settings = task.hidden.grading
    plan = RunPlan(tiny_ctx, task.hidden.target, settings, 0, 0)
    until = wrong_answer(task.expected, settings)
    programs = [original_source(task) + WRONG_AFTER_TWO, original_source(task)]
    with Session(_local(), plan) as session:
        stopped, whole = session.run_all(task.inputs, settings, programs, until=until)
    assert stopped is not None and whole is not None
    assert stopped.result.stopped and not stopped.parsed.done
    assert 3 <= len(stopped.parsed.outcomes) < len(task.inputs)  # killed at its first wrong
    assert whole.parsed.done and len(whole.parsed.outcomes) == len(task.inputs)


def test_a_target_s_runs_fall_back_to_jails_of_their_own_once_its_session_died(
    tiny: Tiny, tiny_ctx: RepoContext
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    target, inputs, settings = task.hidden.target, task.inputs, task.hidden.grading
    killer = original_source(task) + KILLS_ITS_SESSION
    args = {"hash_seed": 0, "clock_shift_days": 0, "encode_inputs": False, "until": None}
    with TargetSessions(_local(), tiny_ctx) as sessions:
        first = sessions.run(target, inputs, settings, None, **args)  # type: ignore[arg-type]
        died = sessions.run(target, inputs, settings, killer, **args)  # type: ignore[arg-type]
        after = sessions.run(target, inputs, settings, None, **args)  # type: ignore[arg-type]
    assert first is not None and first.parsed.done
    assert died is None and after is None  # the caller runs them alone from here on
    assert not [p for p in _processes() if "replicate-session-" in p]


def test_closing_a_session_leaves_no_jail_running(tiny: Tiny, tiny_ctx: RepoContext) -> None:
    task = tiny.task("tinypkg.core.clamp")
    plan = RunPlan(tiny_ctx, task.hidden.target, GradingSettings(), 0, 0)
    session = Session(_local(), plan)
    assert [p for p in _processes() if str(session.scratch) in p]
    session.close()
    assert not [p for p in _processes() if str(session.scratch) in p]
    assert not session.scratch.exists()


def _processes() -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                found.append(handle.read().replace(b"\0", b" ").decode("utf-8", "replace"))
        except OSError:
            continue
    return found
