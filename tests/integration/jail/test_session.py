"""A session (`replicate.jail.session`): one jail forking a child per run of our own programs,
and a gen worker's sessions of a target file (`replicate.jail.series.FileSessions`)."""

from __future__ import annotations

import os

import pytest

from replicate.core import GradingSettings
from replicate.gen.strength import wrong_answer
from replicate.grading.grader import original_source
from replicate.jail import session as session_module
from replicate.jail.calls import JailRun, RepoContext, RunPlan, run_calls
from replicate.jail.series import FileSessions, WorkerSessions
from replicate.jail.session import Session
from replicate.sandbox import get_sandbox
from replicate.sandbox.base import WarmStart
from replicate.scratch import owner_token
from tests.integration.minted import Tiny

PID = b"\n\nimport os\n\ndef clamp(value, low, high):\n    return os.getpid()\n"
WRONG_AFTER_TWO = (  # and slow after its first wrong answer: the kill comes before the end
    b"\n\nimport time\n\n_SEEN = []\n\n"
    b"def clamp(value, low, high):\n"
    b"    _SEEN.append(value)\n"
    b"    if len(_SEEN) > 3:\n"
    b"        time.sleep(0.05)\n"
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


def _pids_in(tiny: Tiny, ctx: RepoContext, hash_seed: int, shift: int, runs: int) -> list[object]:
    """The pid each of `runs` runs of one session gives."""
    task = tiny.task("tinypkg.core.clamp")
    settings = task.hidden.grading
    plan = RunPlan(ctx, task.hidden.target, settings, hash_seed, shift)
    program = original_source(task) + PID
    with Session(_local(), plan) as session:
        runs_made = session.run_all(task.inputs[:1], settings, [program] * runs)
    return [_first_value(run) for run in runs_made]


def test_children_of_sessions_of_other_seeds_have_other_pids(
    tiny: Tiny, tiny_ctx: RepoContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions live from one target to the next of a file, so the golden runs' two sessions
    may have served any numbers of runs before; their children's pids still never agree."""
    task = tiny.task("tinypkg.core.clamp")
    alone = run_calls(
        tiny_ctx,
        task.hidden.target,
        task.inputs[:1],
        _local(),
        task.hidden.grading,
        override=original_source(task) + PID,
    )
    assert _first_value(alone) == "2"
    with monkeypatch.context() as unaligned:  # the control: pids as they come
        unaligned.setattr(session_module, "pid_residue", lambda plan: None)
        first = _pids_in(tiny, tiny_ctx, 1, 0, 1)
        other = _pids_in(tiny, tiny_ctx, 2, 30, 1)
    assert first == other and "2" not in first  # the golden runs' sessions would agree
    seed_1 = _pids_in(tiny, tiny_ctx, 1, 0, 6)
    seed_2 = _pids_in(tiny, tiny_ctx, 2, 30, 6)
    seed_0 = _pids_in(tiny, tiny_ctx, 0, 0, 6)
    assert len(set(seed_1) | set(seed_2) | set(seed_0)) == 18, (seed_1, seed_2, seed_0)
    assert "2" not in seed_1 + seed_2 + seed_0


def test_a_file_s_sessions_serve_its_next_target_whichever_worker_mints_it(
    tiny: Tiny, tiny_ctx: RepoContext
) -> None:
    clamp, evens = tiny.task("tinypkg.core.clamp"), tiny.task("tinypkg.core.evens")
    assert clamp.hidden.target.path == evens.hidden.target.path
    args = {"hash_seed": 0, "clock_shift_days": 0, "encode_inputs": False, "until": None}
    runs = []
    with WorkerSessions(_local(), tiny_ctx, idle=1) as workers:
        with workers.lend(clamp.hidden.target) as sessions:
            runs.append(
                sessions.run(clamp.hidden.target, clamp.inputs, clamp.hidden.grading, None, **args)
            )  # type: ignore[arg-type]
            before = dict(sessions.sessions)
            with workers.lend(evens.hidden.target) as meanwhile:  # lent at once: another set
                assert meanwhile is not sessions
        with workers.lend(evens.hidden.target) as again:  # the last given back is lent first
            assert again is sessions
            runs.append(
                again.run(evens.hidden.target, evens.inputs, evens.hidden.grading, None, **args)
            )  # type: ignore[arg-type]
            assert dict(again.sessions) == before  # the same jail ran both targets
        assert meanwhile.closed and not sessions.closed  # one set kept unused (idle=1)
    assert sessions.closed
    for run, task in zip(runs, (clamp, evens), strict=True):
        assert run is not None and run.parsed.done
        got = run.parsed.outcomes
        assert all(got[i.index]["value"] == task.expected[i.index]["value"] for i in task.inputs)
    # sessions of this process only: a gen running beside the tests has its own
    assert not [p for p in _processes() if f"replicate-session-{owner_token()}-" in p]


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


HANGS_AT_IMPORT = b"\n\nimport time\n\ntime.sleep(60)\n"


@pytest.mark.parametrize("one_at_a_time", ["until", "candidates"])
def test_runs_after_a_run_the_session_gave_up_on_come_back_none(
    tiny: Tiny, tiny_ctx: RepoContext, monkeypatch: pytest.MonkeyPatch, one_at_a_time: str
) -> None:
    """A run past its limit closes the session (its files removed); the programs after it, sent
    one at a time, come back None rather than raising on the removed files (a gen on a loaded
    machine ended in a FileNotFoundError traceback so)."""
    # The host gives the run up before the runner stops it (as when the machine is so loaded
    # that the runner's report comes later than the limit and its grace)
    monkeypatch.setattr(session_module, "GRACE_S", -1.5)
    task = tiny.task("tinypkg.core.clamp")
    settings = task.hidden.grading.model_copy(update={"total_timeout_s": 2.0})
    plan = RunPlan(tiny_ctx, task.hidden.target, settings, 0, 0)
    until = wrong_answer(task.expected, settings) if one_at_a_time == "until" else None
    programs = [original_source(task) + HANGS_AT_IMPORT, original_source(task)]
    with Session(_local(), plan, candidates=one_at_a_time == "candidates") as session:
        runs = session.run_all(task.inputs, settings, programs, until=until)
    assert runs == [None, None]
    assert session.closed and not session.scratch.exists()


def test_a_target_s_runs_fall_back_to_jails_of_their_own_once_its_session_died(
    tiny: Tiny, tiny_ctx: RepoContext
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    target, inputs, settings = task.hidden.target, task.inputs, task.hidden.grading
    killer = original_source(task) + KILLS_ITS_SESSION
    args = {"hash_seed": 0, "clock_shift_days": 0, "encode_inputs": False, "until": None}
    with FileSessions(_local(), tiny_ctx) as sessions:
        first = sessions.run(target, inputs, settings, None, **args)  # type: ignore[arg-type]
        died = sessions.run(target, inputs, settings, killer, **args)  # type: ignore[arg-type]
        after = sessions.run(target, inputs, settings, None, **args)  # type: ignore[arg-type]
    assert first is not None and first.parsed.done
    assert died is None and after is None  # the caller runs them alone from here on
    # sessions of this process only: a gen running beside the tests has its own
    assert not [p for p in _processes() if f"replicate-session-{owner_token()}-" in p]


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


SHARED = (  # `clamp` says whether its constant is the very object `_other`'s is
    b'\n\ndef _other():\n    return "a shared constant, not a name"\n\n\n'
    b"def clamp(value, low, high):\n"
    b'    mine = "a shared constant, not a name"\n'
    b"    return mine is _other()\n"
)


def test_a_program_sent_twice_is_compiled_once_and_its_mutants_in_part(
    tiny: Tiny, tiny_ctx: RepoContext
) -> None:
    """The session's runner holds a program it was sent twice, compiled, and a child whose
    file differs from it inside one function compiles only that function (runner._patched):
    seen here through the one difference that leaves, a constant no longer shared with the
    module's other functions.  The control: the same mutant as a session's first program."""
    task = tiny.task("tinypkg.core.clamp")
    settings = task.hidden.grading
    plan = RunPlan(tiny_ctx, task.hidden.target, settings, 0, 0)
    program = original_source(task) + SHARED
    mutant = program.replace(b"is _other()\n", b"is (_other())\n")
    moved_default = program.replace(b"def _other():", b"def _other(x=1):")
    inputs = task.inputs[:1]
    with Session(_local(), plan) as session:
        runs = session.run_all(inputs, settings, [program, program, mutant, moved_default])
    assert [_first_value(run) for run in runs] == [True, True, False, True]
    with Session(_local(), plan) as session:
        (alone,) = session.run_all(inputs, settings, [mutant])
    assert _first_value(alone) is True
