"""Warm jails: started ahead of their candidate, one use each, same verdicts as cold jails."""

from __future__ import annotations

import os
import time

from replicate.harness.jail import RepoContext, run_calls
from replicate.harness.sandbox import get_sandbox
from replicate.harness.sandbox.base import WarmStart
from replicate.harness.warm import WarmPool
from replicate.verifiers.grader import original_source
from tests.unit.minted import Tiny

# Remembers state in a module global and in a file: a fresh jail per candidate shows neither.
STATEFUL = (
    b"\n\nimport os\n_CALLS = []\n\n"
    b"def clamp(value, low, high):\n"
    b"    _CALLS.append(value)\n"
    b"    seen = os.path.exists('/tmp/mark')\n"
    b"    open('/tmp/mark', 'w').close()\n"
    b"    return (len(_CALLS), seen)\n"
)


def _values(run: object) -> list[object]:
    outcomes = run.parsed.outcomes  # type: ignore[attr-defined]
    return [outcomes[i]["value"] for i in sorted(outcomes)]


def test_warm_runs_give_the_cold_results_and_never_share_a_jail(
    tiny: Tiny, tiny_ctx: RepoContext
) -> None:
    sandbox = get_sandbox("local")
    assert isinstance(sandbox, WarmStart)
    task = tiny.task("tinypkg.core.clamp")
    target, inputs, settings = task.hidden.target, task.inputs, task.hidden.grading
    cold = run_calls(tiny_ctx, target, inputs, sandbox, settings, override=original_source(task))
    stateful = original_source(task) + STATEFUL
    with WarmPool(sandbox, per_key=1) as pool:
        warm = [
            run_calls(tiny_ctx, target, inputs, sandbox, settings, override=source, pool=pool)
            for source in (original_source(task), stateful, stateful)
        ]
    assert warm[0].parsed.done and _values(warm[0]) == _values(cold)
    # Each stateful candidate starts from nothing: call counts restart, the /tmp mark is new.
    first, second = _values(warm[1]), _values(warm[2])
    assert first == second
    assert first[0]["v"][0]["v"] == "1" and first[0]["v"][1] == {"t": "bool", "v": False}


def _warm_jails() -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if b"replicate-warm-" in handle.read():
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
