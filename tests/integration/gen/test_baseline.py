"""Degenerate programs: which run in the jail, which are read off the stub, and the baseline."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from replicate.core.records import Baseline, CallKind, DegenerateScore, Target
from replicate.gen.baseline import (
    derivable,
    derived_outcomes,
    overpaid,
    programs_to_run,
    summarise,
    too_weak,
    visible_table,
    weak_detail,
    with_body,
)
from replicate.grading.grader import grade_text, original_source, stubbed_source
from replicate.grading.reward import normalise, score
from replicate.jail import Jail
from replicate.jail.calls import RepoContext
from replicate.sandbox.base import Sandbox
from tests.integration.minted import Tiny
from tests.targets import made_target


def _target(
    signature: str, kind: CallKind = "function", decorators: tuple[str, ...] = ()
) -> Target:
    qualname = "f" if kind == "function" else "Box.f"
    return made_target(qualname, kind, signature, decorators=decorators)


def test_programs_that_need_a_run_of_their_own() -> None:
    assert [p.body for p in programs_to_run(_target("def f(a, b):"))] == [
        "return a",
        "return b",
        "return a.__class__()",
        "return b.__class__()",
    ]
    method = _target("    def f(self, x):", "method")
    assert [p.body for p in programs_to_run(method)] == [
        "return x",
        "return self",
        "return x.__class__()",
    ]
    assert [p.name for p in programs_to_run(method)] == [
        "return x",
        "return parameter self",
        "return empty x",
    ]
    assert [p.body for p in programs_to_run(_target("    def f(self):", "method"))] == [
        "return self"
    ]
    cached = _target("@functools.cache\ndef f(n):", decorators=("functools.cache",))
    common = [{"status": "returned", "value": {"t": "str", "v": "x"}}]
    assert [p.body for p in programs_to_run(cached, common=common)] == [
        "return n",
        "return n.__class__()",
        "return None",
        "raise ValueError",
        "return 'x'",
        "return ''",
    ]


def _stub(n: int) -> dict[str, Any]:
    exc = {"type": "builtins.NotImplementedError", "msg": ""}
    return {"status": "raised", "exc": exc, "args": [{"t": "int", "v": str(n)}], "kwargs": {}}


def _ret(n: int) -> dict[str, Any]:
    value = {"t": "int", "v": str(n)}
    return {"status": "returned", "value": value, "args": [value], "kwargs": {}}


def test_outcomes_read_off_the_stub(tiny: Tiny) -> None:
    task = tiny.task("tinypkg.core.parse_int")
    stub = {i.index: _stub(i.index) for i in task.inputs}
    derived = derived_outcomes(task, stub)
    assert {"return None", "raise ValueError"} <= set(derived)
    assert any(name.startswith("return constant") for name in derived)
    none = derived["return None"][task.inputs[0].index]
    assert none["status"] == "returned" and none["value"] == {"t": "none"}
    assert none["args"] == stub[task.inputs[0].index]["args"]  # what the body left behind
    raised = derived["raise ValueError"][task.inputs[0].index]
    assert raised["exc"]["type"] == "builtins.ValueError"
    odd = {task.inputs[0].index: _ret(1)}  # the stub's body did not run as such: kept as is
    assert derived_outcomes(task, odd)["return None"] == odd
    decorated = dataclasses.replace(
        task,
        hidden=task.hidden.model_copy(
            update={"target": task.hidden.target.model_copy(update={"decorators": ("cache",)})}
        ),
    )
    assert derived_outcomes(decorated, stub) == {}


def test_nothing_is_read_off_a_stub_that_failed_to_load_an_input(tiny: Tiny) -> None:
    """A method's `self` built from its class call runs the class's code, which may call the
    target (boltons' `Table.__init__` calls `_fill`): the stub then fails the load, and what
    `return None` would have done cannot be read off it; it runs in the jail instead."""
    task = tiny.task("tinypkg.core.parse_int")
    stub = {i.index: _stub(i.index) for i in task.inputs}
    assert derivable(task.hidden.target, stub) and derived_outcomes(task, stub)
    failed = {**stub, task.inputs[0].index: {"status": "load_error", "msg": "NotImplementedError"}}
    assert not derivable(task.hidden.target, failed)
    assert derived_outcomes(task, failed) == {}
    assert not derivable(task.hidden.target, None)
    method = _target("    def f(self):", "method")
    assert [p.body for p in programs_to_run(method, derived=False)] == [
        "return self",
        "return None",
        "raise ValueError",
    ]


def test_summary_ranks_programs_and_too_weak_tells_why(tiny: Tiny) -> None:
    task = tiny.task("tinypkg.core.parse_int")
    found = summarise(task, {"return None": {}, "perfect": task.expected})
    assert found.raw_reward == 1.0
    assert [p.program for p in found.programs] == [
        "perfect",
        "visible calls, else perfect",
        "visible calls, else return None",
        "return None",
    ]
    weak = Baseline(raw_reward=0.6, programs=(DegenerateScore(program="return x", raw_reward=0.6),))
    assert too_weak(weak) == "a degenerate program (return) scores 0.5 or more"
    assert (
        weak_detail(weak)
        == "a degenerate program (return x) scores 0.60, at or above the floor 0.5"
    )
    at = Baseline(raw_reward=0.5, programs=(DegenerateScore(program="return x", raw_reward=0.5),))
    assert too_weak(at) == "a degenerate program (return) scores 0.5 or more"  # at the floor
    constant = DegenerateScore(program="return constant False", raw_reward=0.7)
    assert too_weak(Baseline(raw_reward=0.7, programs=(constant,))) is None
    high = constant.model_copy(update={"raw_reward": 0.95})
    assert too_weak(Baseline(raw_reward=0.95, programs=(high,))) == (
        "a degenerate program (a constant) scores 0.9 or more"
    )


def test_tables_of_the_visible_calls_are_held_to_the_floor_of_what_they_fall_back_on() -> None:
    # A task whose hidden inputs are all visible calls: the table answers every one (raw 1.0).
    # Such tasks were minted (the check skipped tables) and normalise(raw, 1.0) paid raw.
    everything = DegenerateScore(program="visible calls, else return None", raw_reward=1.0)
    assert too_weak(Baseline(raw_reward=1.0, programs=(everything,))) == (
        "a degenerate program (the visible calls, else return) scores 0.5 or more"
    )
    table = DegenerateScore(program="visible calls, else raise ValueError", raw_reward=0.49)
    assert too_weak(Baseline(raw_reward=0.49, programs=(table,))) is None
    constant = DegenerateScore(program="visible calls, else return constant 0", raw_reward=0.85)
    assert too_weak(Baseline(raw_reward=0.85, programs=(constant,))) is None
    high = constant.model_copy(update={"raw_reward": 0.97})
    assert too_weak(Baseline(raw_reward=0.97, programs=(high,))) == (
        "a degenerate program (the visible calls, else a constant) scores 0.9 or more"
    )


def test_overpaid_checks_each_program_against_the_recorded_baseline() -> None:
    programs = (
        DegenerateScore(program="visible calls, else return None", raw_reward=0.45),
        DegenerateScore(program="return None", raw_reward=0.2),
    )
    assert overpaid(Baseline(raw_reward=0.45, programs=programs)) is None
    # A baseline that is not the best program's (recorded before the tables counted, say)
    # would pay the table (0.45 - 0.2) / 0.8 = 0.31: the task is dropped.
    assert overpaid(Baseline(raw_reward=0.2, programs=programs)) == (
        "a degenerate program (the visible calls, else return) earns more than 0.05 normalised"
    )
    assert weak_detail(Baseline(raw_reward=0.2, programs=programs)) == (
        "a degenerate program (visible calls, else return None) earns 0.31 normalised (raw "
        "0.45 against the baseline 0.20)"
    )
    assert weak_detail(Baseline(raw_reward=0.45, programs=programs)) == ""


def test_only_calls_made_from_the_tests_go_in_the_table(tiny: Tiny) -> None:
    task = tiny.task("tinypkg.core.parse_int")
    traced = [i for i in task.inputs if i.provenance == "traced"]
    assert traced and all(i.visible for i in traced)  # the tiny tests call it directly
    assert not any(i.visible for i in task.inputs if i.provenance != "traced")
    inner = traced[0].model_copy(update={"visible": False})  # as if the library had made it
    hidden = dataclasses.replace(
        task, inputs=tuple(inner if i.index == inner.index else i for i in task.inputs)
    )
    assert set(visible_table(task, {})) == {i.index for i in traced}
    assert set(visible_table(hidden, {})) == {i.index for i in traced[1:]}


def test_a_table_of_the_visible_calls_sets_the_baseline(tiny: Tiny) -> None:
    # Catalogue 16: a lookup table of the repository's tests (in the workspace) answers every
    # traced input; on the rest it can do no better than a degenerate program.
    task = tiny.task("tinypkg.core.parse_int")
    traced = {i.index for i in task.inputs if i.provenance == "traced"}
    assert traced and len(traced) < len(task.inputs)
    table = visible_table(task, {})
    assert set(table) == traced
    settings = task.hidden.grading
    table_raw = score(task.inputs, task.expected, table, settings).reward
    found = summarise(task, {"return None": {}})
    assert found.raw_reward == table_raw > 0.0
    assert found.programs[0].program == "visible calls, else return None"
    assert normalise(table_raw, found.raw_reward) == 0.0
    assert (too_weak(found) is None) == (table_raw < 0.5)  # tables count against the floor


def test_with_body_is_the_stub_with_another_statement(tiny: Tiny) -> None:
    """... and blank lines after it, up to the original's line count (`gen/lines.py`)."""
    task = tiny.task("tinypkg.core.clamp")
    stub, original = with_body(task, "raise NotImplementedError"), original_source(task)
    assert stub.count(b"\n") == original.count(b"\n") > stubbed_source(task).count(b"\n")
    assert re.sub(rb"\n+", b"\n", stub) == re.sub(rb"\n+", b"\n", stubbed_source(task))
    assert b"    return None\n" in with_body(task, "return None")


def test_minted_baselines_make_degenerate_programs_score_zero(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    for symbol, first in (
        ("tinypkg.core.parse_int", "text"),
        ("tinypkg.core.Counter.add", "amount"),
    ):
        task = tiny.task(symbol)
        baseline = task.hidden.baseline
        assert baseline is not None and baseline.programs
        names = {p.program for p in baseline.programs}
        assert {"raise NotImplementedError", "return None", f"return {first}"} <= names
        assert baseline.raw_reward == max(p.raw_reward for p in baseline.programs)
        for body in ("return None", f"return {first}", "raise ValueError"):
            source = with_body(task, body).decode()
            verdict = grade_text(task, source, Jail(tiny_ctx, local_sandbox), shrink=False)
            assert verdict.reward == 0.0, (symbol, body, verdict.raw_reward, baseline)
