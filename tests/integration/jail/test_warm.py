"""Warm jails: started ahead of their candidate, one use each, same verdicts as cold jails."""

from __future__ import annotations

import os
import time

import pytest

from replicate.batch.store import LoadedTask
from replicate.grading.grader import original_source
from replicate.jail.calls import RepoContext, run_calls
from replicate.jail.warm import WarmPool
from replicate.sandbox import get_sandbox
from replicate.sandbox.base import Sandbox, SandboxResult, WarmStart
from replicate.scratch import owner_token
from tests.integration.minted import Tiny

# Remembers state in a module global and in a file: a fresh jail per candidate shows neither.
STATEFUL = (
    b"\n\nimport os\n_CALLS = []\n\n"
    b"def clamp(value, low, high):\n"
    b"    _CALLS.append(value)\n"
    b"    seen = os.path.exists('/tmp/mark')\n"
    b"    open('/tmp/mark', 'w').close()\n"
    b"    return (len(_CALLS), seen)\n"
)


def _local_clamp(tiny: Tiny) -> tuple[Sandbox, LoadedTask]:
    """The local sandbox (which starts warm jails) and the task both real-jail tests grade."""
    sandbox = get_sandbox("local")
    assert isinstance(sandbox, WarmStart)
    return sandbox, tiny.task("tinypkg.core.clamp")


def _values(run: object) -> list[object]:
    outcomes = run.parsed.outcomes  # type: ignore[attr-defined]
    return [outcomes[i]["value"] for i in sorted(outcomes)]


def test_warm_runs_give_the_cold_results_and_never_share_a_jail(
    tiny: Tiny, tiny_ctx: RepoContext
) -> None:
    sandbox, task = _local_clamp(tiny)
    target, inputs, settings = task.hidden.target, task.inputs, task.hidden.grading
    cold = run_calls(tiny_ctx, target, inputs, sandbox, settings, override=original_source(task))
    stateful = original_source(task) + STATEFUL
    with WarmPool(sandbox, per_key=1) as pool:
        warm = [
            run_calls(tiny_ctx, target, inputs, sandbox, settings, override=source, pool=pool)
            for source in (original_source(task), stateful, stateful)
        ]
    assert warm[0].parsed.done and _values(warm[0]) == _values(cold)
    # a warm jail is killed at the runner's `done` frame rather than waited for (SIGKILL), unless
    # the runner's own os._exit(0) right after that frame wins the race (seen in CI); a cold one
    # always exits by itself
    assert cold.result.exit_code == 0 and warm[0].result.exit_code in (0, 128 + 9)
    # Each stateful candidate starts from nothing: call counts restart, the /tmp mark is new.
    first, second = _values(warm[1]), _values(warm[2])
    assert first == second
    assert first[0]["v"][0]["v"] == "1" and first[0]["v"][1] == {"t": "bool", "v": False}


def _warm_jails() -> list[str]:
    """This process's warm jails (another process's, a gen beside the tests say, do not count)."""
    mine = f"replicate-warm-{owner_token()}-".encode()
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if mine in handle.read():
                    found.append(pid)
        except OSError:
            continue
    return found


def test_closing_the_pool_leaves_no_jail_running(tiny: Tiny, tiny_ctx: RepoContext) -> None:
    sandbox = get_sandbox("local")
    assert isinstance(sandbox, WarmStart)
    task = tiny.task("tinypkg.core.clamp")
    pool = WarmPool(sandbox, per_key=2)
    run_calls(
        tiny_ctx,
        task.hidden.target,
        task.inputs,
        sandbox,
        task.hidden.grading,
        override=original_source(task),
        pool=pool,
    )
    deadline = time.monotonic() + 10
    while len(_warm_jails()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _warm_jails(), "the pool should hold started jails for the next candidates"
    pool.close()
    assert _warm_jails() == []


class _Counting:
    """A warm-start sandbox that only counts starts (its slots finish with an empty result)."""

    def __init__(self) -> None:
        self.starts = 0

    def start(self, request: object) -> _Started:
        self.starts += 1
        return _Started()


class _Started:
    def finish(self, stdin: bytes, timeout_s: float, stop: object = None) -> SandboxResult:
        return SandboxResult(exit_code=0, timed_out=False, duration_s=0.0)

    def cancel(self) -> None:
        pass


def _settle(pool: WarmPool) -> None:
    """Until every start the pool has queued has happened."""
    for queue in list(pool._ready.values()):
        for future in list(queue):
            future.result()


def test_a_replacement_starts_only_once_the_grade_is_read() -> None:
    # Starting a jail forks this process and loads a core: done during a grade it slowed the
    # grade by ~20 ms (a warm grade of 500 calls took 110 ms instead of 65).
    sandbox = _Counting()
    with WarmPool(sandbox, per_key=1) as pool:
        slot = pool.take("key", lambda candidate: None)  # type: ignore[arg-type,return-value]
        _settle(pool)
        assert sandbox.starts == 1  # the cold start only
        slot.run(b"", b"", 1.0)
        _settle(pool)
        assert sandbox.starts == 1  # graded, not yet read
        slot.replace()
        _settle(pool)
        assert sandbox.starts == 2  # now the next candidate's jail is started
        slot.replace()  # once only
        taken = pool.take("key", lambda candidate: None)  # type: ignore[arg-type,return-value]
        _settle(pool)
        assert sandbox.starts == 2  # the warm one was taken; no start until it is read
        taken.discard()  # a slot taken is its taker's to end (its scratch directory too)


LOOPING = b"\n\ndef clamp(value, low, high):\n    while True:\n        pass\n"


def test_until_ends_a_warm_run_at_the_outcome_it_waits_for(
    tiny: Tiny, tiny_ctx: RepoContext
) -> None:
    sandbox, task = _local_clamp(tiny)
    target, inputs = task.hidden.target, task.inputs[:8]
    settings = task.hidden.grading.model_copy(update={"call_timeout_s": 0.3})
    source = original_source(task) + LOOPING

    def timeout(frame: object) -> bool:
        return frame["outcome"]["status"] == "timeout"  # type: ignore[index]

    with WarmPool(sandbox, per_key=1) as pool:
        timings = []
        for until in (None, timeout):
            started = time.monotonic()
            run = run_calls(
                tiny_ctx, target, inputs, sandbox, settings, override=source, pool=pool, until=until
            )
            timings.append(time.monotonic() - started)
            statuses = [o["status"] for o in run.parsed.outcomes.values()]
            assert statuses and set(statuses) == {"timeout"} and not run.infra_problem()
            if until is None:  # control: every input waits out its limit
                assert len(statuses) == len(inputs) == 8
            else:
                assert len(statuses) == 1 and run.result.exit_code != 0
    assert timings[1] < 0.3 * len(inputs) / 2 < timings[0]
    assert _warm_jails() == []


def test_a_warm_jail_runs_the_job_it_was_started_with_only(
    tiny: Tiny, tiny_ctx: RepoContext
) -> None:
    # A warm jail gets its job (the inputs) when it starts: a grade of other inputs of the same
    # file must get a jail started for them, not one holding the previous grade's inputs.
    sandbox, task = _local_clamp(tiny)
    target, settings, source = task.hidden.target, task.hidden.grading, original_source(task)
    first, second = task.inputs[:2], task.inputs[2:5]
    with WarmPool(sandbox, per_key=1) as pool:
        for inputs in (first, second, first, second):
            run = run_calls(tiny_ctx, target, inputs, sandbox, settings, override=source, pool=pool)
            cold = run_calls(tiny_ctx, target, inputs, sandbox, settings, override=source)
            assert sorted(run.parsed.outcomes) == [i.index for i in inputs]
            assert _values(run) == _values(cold)


def _take_all(pool: WarmPool, grades: int) -> None:
    for _ in range(grades):
        slot = pool.take("key", lambda candidate: None)  # type: ignore[arg-type,return-value]
        slot.run(b"", b"", 1.0)
        slot.replace()
        _settle(pool)


@pytest.mark.parametrize(("starts", "started"), [(None, 5 + 2), (5, 5)])
def test_a_pool_told_how_many_it_grades_starts_no_spare(starts: int | None, started: int) -> None:
    # Mutant grading at gen time: two spares per task started and discarded unused were ~11%
    # of a gen's jails (the positive control: without `starts`, the pool overshoots).
    sandbox = _Counting()
    with WarmPool(sandbox, per_key=2, starts=starts) as pool:
        _take_all(pool, 5)
    assert sandbox.starts == started
