"""Task strength: mutants graded as candidates, survivors hunted with new inputs."""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import pytest

from replicate.batch.store import LoadedTask
from replicate.core.records import CallInput, Strength
from replicate.gen import strength as strength_module
from replicate.gen.golden import Golden
from replicate.gen.mutants import Mutant
from replicate.gen.strength import (
    Assessment,
    assess,
    mutant_settings,
    rejected,
    run_mutants,
    task_mutants,
    with_added,
)
from replicate.gen.survivors import Search
from replicate.inputs.widening import Budget
from replicate.jail import Jail
from replicate.jail.calls import RepoContext
from replicate.sandbox.base import Sandbox
from tests.integration.minted import Tiny

NO_SEARCH = Budget(widened=0, edge=0)


def _only(task: LoadedTask, calls: set[str]) -> LoadedTask:
    """The task graded on just the hidden inputs rendered as `calls`: a weak task."""
    kept = tuple(i for i in task.inputs if i.call in calls)
    assert {i.call for i in kept} == calls
    return dataclasses.replace(
        task, inputs=kept, expected={i.index: task.expected[i.index] for i in kept}
    )


def test_a_weak_task_kills_few_mutants_and_the_minted_one_most(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    weak = _only(task, {"clamp(5, 0, 10)"})  # never below low nor above high
    found = assess(weak, Jail(tiny_ctx, local_sandbox), budget=NO_SEARCH, workers=2)
    assert not isinstance(found, str)
    assert found.strength.mutants >= 8
    assert found.strength.kill_rate < 0.5
    assert found.strength.added_inputs == 0
    assert rejected(found.strength, 0.5) is not None
    full = assess(task, Jail(tiny_ctx, local_sandbox), budget=NO_SEARCH, workers=2)
    assert not isinstance(full, str)
    assert full.strength.mutants == found.strength.mutants
    # clamp's only survivors: `value < low` -> `<=` and `value > high` -> `>=` (equivalent)
    assert full.strength.killed == full.strength.mutants - 2
    assert sorted(m.operator for m in full.survivors) == ["swap Gt->GtE", "swap Lt->LtE"]


def test_the_search_finds_inputs_that_kill_survivors(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    weak = _only(tiny.task("tinypkg.core.clamp"), {"clamp(5, 0, 10)"})
    found = assess(
        weak, Jail(tiny_ctx, local_sandbox), budget=Budget(widened=60, edge=20), workers=2
    )
    assert not isinstance(found, str)
    strength = found.strength
    assert strength.killed_before < 0.5 * strength.mutants
    assert strength.added_inputs >= 2 and len(found.added) == strength.added_inputs
    assert strength.kill_rate >= 0.8 and strength.killed > strength.killed_before
    assert strength.likely_equivalent == 2
    # the added inputs kill, when graded, the mutants that survived the weak task
    stronger = dataclasses.replace(
        weak,
        inputs=(*weak.inputs, *found.added),
        expected={**weak.expected, **found.added_expected},
    )
    survivors = [r.mutant for r in found.runs if not r.killed]
    settings = mutant_settings(stronger, 1.0)
    again = run_mutants(
        stronger,
        survivors,
        Jail(tiny_ctx, local_sandbox),
        stronger.inputs,
        stronger.expected,
        settings,
    )
    assert sum(r.killed for r in again) == strength.killed - strength.killed_before
    assert all(found.added_expected[i.index]["status"] == "returned" for i in found.added)


def test_the_reference_s_own_run_is_made_only_when_a_mutant_survives(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    jail = Jail(tiny_ctx, local_sandbox)
    made: list[str] = []
    real = strength_module.reference_run

    def counted(task: LoadedTask, jail: Jail) -> Any:
        made.append(task.spec.source.symbol)
        return real(task, jail)

    monkeypatch.setattr(strength_module, "reference_run", counted)
    with_survivors = assess(task, jail, budget=NO_SEARCH, workers=2, reference_s=0.5)
    assert not isinstance(with_survivors, str) and with_survivors.survivors
    assert len(made) == 1  # the survivor search needs the seeds it gives
    equivalent = {"swap Gt->GtE", "swap Lt->LtE"}  # clamp's only survivors (see above)
    killable = [m for m in task_mutants(task) if m.operator not in equivalent]
    monkeypatch.setattr(strength_module, "task_mutants", lambda task, limit: killable)
    made.clear()
    timed = assess(task, jail, budget=NO_SEARCH, workers=2, reference_s=0.5)
    assert not isinstance(timed, str)
    assert made == [] and timed.strength.killed == timed.strength.mutants == len(killable)
    untimed = assess(task, jail, budget=NO_SEARCH, workers=2)  # the control: no timed run given
    assert not isinstance(untimed, str)
    assert len(made) == 1 and untimed.strength == timed.strength


def test_mutants_of_a_method_are_graded(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    task = tiny.task("tinypkg.core.Counter.add")
    assert task_mutants(task)
    found = assess(task, Jail(tiny_ctx, local_sandbox), budget=NO_SEARCH)
    assert not isinstance(found, str)
    assert found.strength.mutants >= 3 and found.strength.kill_rate == 1.0


LOOPS = '''def clamp(value, low, high):
    """Clamp value into [low, high]."""
    while value == value:
        pass
    return value
'''


def test_a_mutant_that_loops_is_stopped_at_a_limit_scaled_to_the_reference_s_slowest_call(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mutant whose call never ends is killed either way; with the reference's slowest call
    known it is stopped at 25x that (at least 0.25 s), not at the task's own 1 s limit."""
    task = tiny.task("tinypkg.core.clamp")
    assert task.hidden.grading.call_timeout_s == 1.0
    jail = Jail(tiny_ctx, local_sandbox)
    stopped: list[float] = []
    real = Jail.run_series

    def timed(self: Jail, *args: Any, **kwargs: Any) -> Any:
        runs = real(self, *args, **kwargs)
        outcomes = [o for r in runs if r is not None for o in r.parsed.outcomes.values()]
        stopped.extend(float(o["t"]) for o in outcomes if o.get("status") == "timeout")
        return runs

    monkeypatch.setattr(Jail, "run_series", timed)
    looping = [Mutant(0, "loop", 1, LOOPS)]
    job = (task.inputs, task.expected)
    control = run_mutants(task, looping, jail, *job, mutant_settings(task, 0.1), first_wrong=True)
    assert [r.status for r in control] == ["killed"] and stopped and min(stopped) >= 1.0
    stopped.clear()
    scaled = mutant_settings(task, 0.1, slowest_s=0.001)
    assert scaled.call_timeout_s == 0.25
    leashed = run_mutants(task, looping, jail, *job, scaled, first_wrong=True)
    assert [r.status for r in leashed] == ["killed"] and stopped and max(stopped) < 1.0
    assert mutant_settings(task, 0.1, slowest_s=0.02).call_timeout_s == 0.5
    assert mutant_settings(task, 0.1, slowest_s=0.5).call_timeout_s == 1.0  # never past the task's
    # the survivor hunt's inputs may be slower for the reference than the task's own: scaled again
    for times, limit in (({}, 0.25), ({7: 0.004}, 0.25), ({7: 0.02}, 0.5), ({7: 0.1}, 1.0)):
        searched = Search((), {}, times, 0)
        assert strength_module._for_searched(task, scaled, searched).call_timeout_s == limit


def _strength(mutants: int, killed: int) -> Strength:
    return Strength(
        mutants=mutants,
        killed=killed,
        kill_rate=killed / mutants if mutants else 1.0,
        killed_before=killed,
        likely_equivalent=0,
        added_inputs=0,
        searched_inputs=0,
        threshold=0.6,
    )


def test_rejected_below_the_threshold_only() -> None:
    assert rejected(_strength(10, 5)) == "mutant kill rate below 0.60"  # the rate: its detail
    assert rejected(_strength(10, 6)) is None
    assert rejected(_strength(10, 5), threshold=0.5) is None
    assert rejected(_strength(0, 0)) is None  # nothing to mutate: nothing to hold against it


def test_with_added_numbers_after_every_golden_input() -> None:
    inputs = tuple(CallInput(index=n, pickle_b64="") for n in (0, 1, 7))
    g = Golden(inputs, {n: {"status": "returned"} for n in (0, 1, 7)}, 3, Counter(), 0.5, 1.0)
    new = CallInput(index=3, pickle_b64="x", provenance="widened", stratum="widened")
    found = Assessment(_strength(1, 1), (), (new,), {3: {"status": "raised"}}, (0.75,), ())
    out = with_added(g, found)
    assert [i.index for i in out.inputs] == [0, 1, 7, 8]
    assert out.inputs[-1].pickle_b64 == "x" and out.expected[8] == {"status": "raised"}
    assert out.max_call_s == 0.75 and out.total_call_s == 1.75
