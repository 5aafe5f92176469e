"""Golden-output helpers: call rendering, relative time limits, drop reasons."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from replicate.core import DropReason
from replicate.core.records import CallInput, CallKind, Provenance, Target
from replicate.gen import golden, sizes
from replicate.gen.golden import (
    BULKY_BYTES,
    TASK_CALL_S,
    Sizes,
    _first_problem,
    _over_time,
    _second_problem,
    _slow_limit,
    generated_problem,
    keep,
    render_call,
    run_resuming,
    seed_of,
)
from replicate.gen.settings import GOLDEN_SETTINGS, WIDEN_SETTINGS, leashed, timing_settings
from replicate.jail.calls import JailRun
from replicate.jail.frames import ParsedRun
from replicate.sandbox.base import SandboxResult
from tests.integration.minted import Tiny
from tests.targets import made_target


def _target(kind: CallKind, qualname: str = "f", class_name: str | None = None) -> Target:
    return made_target(qualname, kind, class_name=class_name)


def _int(n: int) -> dict[str, str]:
    return {"t": "int", "v": str(n)}


def _returned(value: Any, **extra: Any) -> dict[str, Any]:
    return {"status": "returned", "value": value, "args": [], "kwargs": {}, **extra}


def test_render_function_call() -> None:
    outcome = {"args_in": [_int(1), {"t": "str", "v": "a"}], "kwargs_in": {"k": _int(2)}}
    assert render_call(_target("function"), outcome) == "f(1, 'a', k=2)"
    assert render_call(_target("function"), {}) == "f()"


def test_render_method_call_shows_self() -> None:
    me = {"t": "obj", "type": "m.Box", "fields": {"n": _int(3)}}
    target = _target("method", "Box.add", "Box")
    assert render_call(target, {"args_in": [me, _int(4)]}) == "Box(n=3).add(4)"


def test_render_class_and_static_method_calls_name_the_class() -> None:
    outcome = {"args_in": [_int(4)]}
    assert render_call(_target("classmethod", "Box.make", "Box"), outcome) == "Box.make(4)"
    assert render_call(_target("staticmethod", "Box.make", "Box"), outcome) == "Box.make(4)"


def test_render_cuts_long_arguments() -> None:
    outcome = {"args_in": [{"t": "str", "v": "x" * 500}]}
    text = render_call(_target("function"), outcome)
    assert text.startswith("f('xxx") and text.endswith("...)") and len(text) < 140


@pytest.mark.parametrize(
    ("max_call", "total", "call_timeout", "total_timeout"),
    [
        (0.0, 0.0, 1.0, 30.0),  # floors
        (0.5, 10.0, 5.0, 70.0),  # 10x the slowest call, 5x the total + 20 s
        (3.0, 100.0, 10.0, 300.0),  # ceilings
        (0.1234, 2.0, 1.234, 30.0),
    ],
)
def test_timing_settings(
    max_call: float, total: float, call_timeout: float, total_timeout: float
) -> None:
    settings = timing_settings(max_call, total)
    assert settings.call_timeout_s == call_timeout
    assert settings.total_timeout_s == total_timeout


def test_drop_reasons() -> None:
    ok = _returned(_int(1), t=0.1)
    assert _first_problem(ok) is None and _second_problem(ok, _returned(_int(1), t=0.9)) is None
    assert _first_problem(None) == "reference hangs or crashes the process"
    assert _second_problem(ok, None) == "reference hangs or crashes the process"
    assert _first_problem({"status": "load_error", "msg": "x"}) == "input does not load in the jail"
    assert _first_problem({"status": "timeout", "t": 5.0}) == "reference hangs"
    opaque = _returned({"t": "opaque", "type": "m.X"})
    assert _first_problem(opaque) == "outcome not comparable"
    assert _second_problem(ok, _returned(_int(2))) == "nondeterministic outcome"
    assert _second_problem(ok, {"status": "timeout", "t": 5.0}) == "reference hangs"
    raised = {
        "status": "raised",
        "exc": {"type": "builtins.ValueError", "msg": "m"},
        "args": [],
        "kwargs": {},
    }
    assert _second_problem(raised, dict(raised)) is None
    assert GOLDEN_SETTINGS.call_timeout_s >= 5.0


def test_a_second_outcome_equal_to_the_first_is_not_walked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    walked: list[object] = []

    def counted(outcome: Any, settings: Any) -> bool:
        walked.append(outcome)
        return True

    monkeypatch.setattr(golden, "is_gradable", counted)
    ok = _returned(_int(1), t=0.1)
    assert _second_problem(ok, _returned(_int(1), t=0.2)) is None and walked == []
    assert _second_problem(ok, _returned(_int(2))) == "nondeterministic outcome"
    assert len(walked) == 1  # a different one is checked: it may be why (not comparable)


def test_generated_inputs_are_also_dropped_when_the_reference_blows_up_or_is_slow() -> None:
    ok = _returned(_int(1), t=0.01)
    assert generated_problem(ok, 0.1) is None
    assert generated_problem(_returned(_int(1), t=0.5), 0.1) == "reference too slow"
    deep = {**ok, "status": "raised", "exc": {"type": "builtins.RecursionError", "msg": ""}}
    assert generated_problem(deep, 0.1) == "reference blows up (recursion, memory)"
    value_error = {**deep, "exc": {"type": "builtins.ValueError", "msg": ""}}
    assert generated_problem(value_error, 0.1) is None
    # a first run stops a call at the limit it would be dropped past anyway (`leashed`)
    assert generated_problem({"status": "timeout", "t": 0.5}, 0.5) == "reference too slow"
    assert leashed(0.5).call_timeout_s == 0.5
    assert leashed(3.0).call_timeout_s == WIDEN_SETTINGS.call_timeout_s == 1.0
    items = [_int(n) for n in range(10_000)]
    bulky = _returned({"t": "iter", "v": items, "truncated": True}, t=0.01)
    assert generated_problem(bulky, 0.1) == "outcome too large for a generated input"


def _item(index: int, provenance: Provenance) -> CallInput:
    return CallInput(index=index, stratum=provenance, provenance=provenance, pickle_b64="")


def test_an_outcome_naming_the_batch_s_folder_is_dropped() -> None:
    """pyparsing's `Forward` keeps the source line that set it, with the file's path: where the
    batch was minted. Moved or exported, even the original answers otherwise."""
    where = "/batch/reference_impls/_repos/key"
    named = _returned({"t": "str", "v": f"{where}/tree/m.py"}, t=0.001)
    plain = _returned({"t": "str", "v": "m.py"}, t=0.001)
    items = [_item(0, "traced"), _item(1, "traced")]
    runs = ({0: named, 1: plain}, {0: named, 1: plain})
    drops: Counter[str] = Counter()
    kept, _, _ = keep(_target("function"), items, runs, drops, Counter(), 1.0, sizes=Sizes(where))
    assert [i.index for i in kept] == [1] and drops == Counter({DropReason.NAMES_BATCH_FOLDER: 1})
    # the control: a batch kept elsewhere holds both
    kept, _, _ = keep(
        _target("function"), items, runs, Counter(), Counter(), 1.0, sizes=Sizes("/else")
    )
    assert [i.index for i in kept] == [0, 1]


def test_slowness_is_judged_on_the_faster_of_two_runs() -> None:
    """Wall-clock hiccups on a busy machine must not change which inputs a batch keeps."""
    traced = [_item(0, "traced"), _item(1, "traced")]
    first = {0: _returned(_int(1), t=0.2), 1: _returned(_int(1), t=0.001)}
    second = {0: _returned(_int(1), t=0.02), 1: _returned(_int(1), t=0.001)}
    assert _slow_limit(traced, first, second) == pytest.approx(0.1)  # 3 x 0.02 < SLOW_S
    assert _slow_limit(traced, second, {}) == pytest.approx(0.1)
    assert _slow_limit(traced, {**first, 0: _returned(_int(1), t=0.05)}, {}) == (
        pytest.approx(0.15)
    )
    made = [_item(2, "widened"), _item(3, "widened"), _item(4, "edge"), _item(5, "traced")]
    first.update({2: _returned(_int(2), t=0.5), 3: _returned(_int(3), t=0.5)})
    first.update({4: _returned(_int(4), t=0.01), 5: _returned(_int(5), t=0.9)})
    second.update({2: _returned(_int(2), t=0.01), 3: _returned(_int(3), t=0.3)})
    second.update({4: _returned(_int(4), t=0.2), 5: _returned(_int(5), t=0.9)})
    drops: Counter[str] = Counter()
    gen_drops: Counter[str] = Counter()
    kept, expected, times = keep(
        _target("function"), [*traced, *made], (first, second), drops, gen_drops, 0.1
    )
    # 2: slow once only (kept); 3: slow twice (dropped); 4: slow once only; 5: traced, never
    assert [i.index for i in kept] == [0, 1, 2, 4, 5]
    assert sorted(expected) == [0, 1, 2, 4, 5] and "t" not in expected[2]
    assert gen_drops == Counter({"reference too slow": 1}) and not drops
    assert times == pytest.approx([0.2, 0.001, 0.5, 0.2, 0.9])  # limits use the slower run


def test_a_tasks_outcomes_stay_within_its_budget_largest_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = {n: {"t": "str", "v": "x" * size} for n, size in enumerate([100, 900, 500, 50])}
    runs = {n: _returned(value, t=0.001) for n, value in text.items()}
    items = [_item(0, "traced"), _item(1, "traced"), _item(2, "widened"), _item(3, "traced")]
    drops: Counter[str] = Counter()
    gen_drops: Counter[str] = Counter()
    monkeypatch.setattr(golden, "TASK_EXPECTED_BYTES", 1000)
    kept, expected, times = keep(_target("function"), items, (runs, runs), drops, gen_drops, 0.1)
    # each outcome is its string plus ~80 bytes of JSON: without the 900, ~1000 are left
    assert [i.index for i in kept] == [0, 2, 3] and sorted(expected) == [0, 2, 3]
    assert drops == Counter({"outcome too large for the task": 1}) and not gen_drops
    assert len(times) == 3
    monkeypatch.setattr(golden, "TASK_EXPECTED_BYTES", 450)  # then the 500 goes too
    kept, expected, _ = keep(_target("function"), items, (runs, runs), drops, gen_drops, 0.1)
    assert [i.index for i in kept] == [0, 3] and gen_drops["outcome too large for the task"] == 1


def test_a_tasks_slowest_inputs_go_until_its_calls_fit_the_time_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The faster of each input's two runs counts: 4.5 and 1.1 s, then quick ones.
    seconds = {0: 4.5, 1: 1.1, 2: 0.001, 3: 0.6, 4: 0.002}
    first = {n: _returned(_int(n), t=s) for n, s in seconds.items()}
    second = {n: _returned(_int(n), t=s + 0.3) for n, s in seconds.items()}
    items = [_item(n, "traced") for n in (0, 1, 2)] + [_item(3, "widened"), _item(4, "edge")]
    drops: Counter[str] = Counter()
    gen_drops: Counter[str] = Counter()
    monkeypatch.setattr(golden, "TASK_CALL_S", 1e9)  # the control: no budget keeps all
    kept, _, times = keep(_target("function"), items, (first, second), drops, gen_drops, 10.0)
    assert [i.index for i in kept] == [0, 1, 2, 3, 4] and sum(times) > 6
    monkeypatch.undo()
    kept, expected, times = keep(
        _target("function"), items, (first, second), drops, gen_drops, 10.0
    )
    # 6.2 s in all: the 4.5 goes; 1.7 s left fits TASK_CALL_S (2 s)
    assert [i.index for i in kept] == [1, 2, 3, 4] and sorted(expected) == [1, 2, 3, 4]
    assert drops == Counter({"reference too slow for the task": 1}) and not gen_drops
    assert len(times) == 4
    monkeypatch.setattr(golden, "TASK_CALL_S", 0.5)  # then the 1.1 and 0.6 go too, not the rest
    drops.clear()
    kept, _, _ = keep(_target("function"), items, (first, second), drops, gen_drops, 10.0)
    assert [i.index for i in kept] == [2, 4]
    assert drops["reference too slow for the task"] == 2
    assert gen_drops == Counter({"reference too slow for the task": 1})
    # Many quick inputs over the budget stay: only inputs slower than SLOW_INPUT_S ever go.
    quick = {n: _returned(_int(n), t=0.4) for n in range(10)}
    many = [_item(n, "traced") for n in range(10)]
    kept, _, _ = keep(_target("function"), many, (quick, quick), Counter(), Counter(), 10.0)
    assert len(kept) == 10


def test_minted_inputs_carry_rendered_calls_and_strata(tiny: Tiny) -> None:
    parse = tiny.task("tinypkg.core.parse_int")
    traced = [i for i in parse.inputs if i.provenance == "traced"]
    assert [i.call for i in traced] == [
        "parse_int('12')",
        "parse_int(' -7 ')",
        "parse_int('x1')",
        "parse_int('')",
    ]
    # two returning traced calls are too few to weigh on their own: folded into widened
    assert [i.stratum for i in traced] == ["widened", "widened", "raises", "raises"]
    # generated inputs: rendered from what the runner received, in their own strata
    generated = [i for i in parse.inputs if i.provenance != "traced"]
    assert len(generated) >= 5 and all(i.call.startswith("parse_int(") for i in generated)
    assert {i.stratum for i in generated} <= {"widened", "edge", "raises"}
    assert all(i.stratum in (i.provenance, "raises") for i in generated)
    add = tiny.task("tinypkg.core.Counter.add")
    assert [i.call for i in add.inputs if i.provenance == "traced"] == [
        "Counter(total=0).add(2)",
        "Counter(total=2).add(3)",
        "Counter(total=10).add(-4)",
    ]
    assert all(i.origin == "tests/test_core.py::test_counter" for i in add.inputs)
    assert any(
        i.provenance == "widened" and i.call.startswith("Counter(total=") for i in add.inputs
    )
    # expected outcomes keep the arguments after the call, not the ones before, nor timings
    assert all(set(o) == {"status", "value", "args", "kwargs"} for o in add.expected.values())
    assert add.expected[0]["args"][0]["fields"]["total"] == _int(2)
    grading = add.hidden.grading
    assert 1.0 <= grading.call_timeout_s <= 10.0 and 30.0 <= grading.total_timeout_s <= 300.0
    assert add.hidden.validation.reference_reward == 1.0
    assert add.hidden.validation.stub_reward == 0.0


class _Runs:
    """Stands for a `Jail`: each run answers the next scripted (outcome indices, timed out)."""

    def __init__(self, script: list[tuple[list[int], bool]]) -> None:
        self.script = script
        self.asked: list[list[int]] = []
        self.ctx = SimpleNamespace(tree=Path("/batch/reference_impls/_repos/key/tree"))

    def run(self, target: Any, inputs: Any, *args: Any, **kwargs: Any) -> JailRun:
        self.asked.append([i.index for i in inputs])
        done, timed_out = self.script.pop(0)
        outcomes = {i: _returned(_int(i), t=0.0) for i in done}
        parsed = ParsedRun(True, None, outcomes, done=not timed_out, started=True)
        return JailRun(parsed, SandboxResult(None if timed_out else 0, timed_out, 1.0))


def test_a_run_out_of_time_partway_goes_on_without_dropping() -> None:
    items = [_item(n, "traced") for n in range(5)]
    # time runs out after 0 and 1 (a busy machine): go on from 2; then 2 is stuck (no progress
    # before the limit): drop it; then 3 crashes the process (no time out): drop it too
    runs = _Runs([([0, 1], True), ([], True), ([], False), ([4], False)])
    outcomes, drops, infra = run_resuming(runs, None, items, seed=1)  # type: ignore[arg-type]
    assert infra is None and sorted(outcomes) == [0, 1, 4]
    assert runs.asked == [[0, 1, 2, 3, 4], [2, 3, 4], [3, 4], [4]]
    assert drops == Counter({"reference hangs or crashes the process": 2})


def test_the_first_run_stops_a_traced_call_at_the_task_s_whole_time_budget() -> None:
    """An input slower than `TASK_CALL_S` is dropped by the budget whatever else the task
    holds, so the first run need not wait out the 5 s after it; the second run keeps 5 s."""
    limits: list[float] = []

    class Spy(_Runs):
        def run(self, target: Any, inputs: Any, *args: Any, **kwargs: Any) -> JailRun:
            limits.append(args[0].call_timeout_s)
            return super().run(target, inputs, *args, **kwargs)

    items = [_item(n, "traced") for n in range(3)]
    runs = Spy([([0, 1, 2], False), ([0, 1, 2], False)])
    found = golden.golden(runs, _target("function"), items)  # type: ignore[arg-type]
    assert len(found.inputs) == 3
    assert limits == [TASK_CALL_S, GOLDEN_SETTINGS.call_timeout_s] == [2.0, 5.0]
    for others in ({}, {1: 0.01}, {1: 1.9, 2: 0.4}, {1: 0.6, 2: 0.7, 3: 0.8}):
        assert 0 in _over_time({0: TASK_CALL_S + 0.01, **others})


def test_an_input_whose_outcome_is_too_large_is_no_seed() -> None:
    # more-itertools' tests pass repeat_each an endless cycle(): its outcome is the item cap's
    # worth, and so was every call varied from it; as a seed it cost minutes and gave nothing
    small = _returned({"t": "list", "v": [_int(1)]}, args_in=[_int(1)])
    endless = {"t": "list", "v": [_int(n) for n in range(BULKY_BYTES // 10)]}
    assert seed_of(_item(0, "traced"), small) is not None
    assert seed_of(_item(1, "traced"), _returned(endless, args_in=[_int(1)])) is None


def _measured(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of every outcome's encoding `golden` makes to measure it, in order."""
    seen: list[int] = []
    text = sizes._text

    def counted(outcome: Any) -> str:
        found = text(outcome)
        seen.append(len(found))
        return found

    monkeypatch.setattr(sizes, "_text", counted)
    return seen


def test_each_first_outcome_is_measured_once_for_screening_seeds_and_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    traced = [_item(n, "traced") for n in range(3)]
    made = [_item(n, "widened") for n in range(3, 7)]
    big = {"t": "str", "v": "x" * (BULKY_BYTES + 10)}
    first = {n: _returned(_int(n), t=0.001) for n in range(7)}
    first[5] = _returned(big, t=0.001)  # a generated input too large to keep
    target, slow = _target("function"), 0.1

    def mint(sizes: golden.Sizes | None) -> tuple[object, ...]:
        fine, drops = golden.screen(made, first, slow, sizes)
        seeds = golden._seeds([*traced, *fine], first, sizes or golden.Sizes())
        kept, expected, _ = keep(
            target, [*traced, *fine], (first, first), Counter(), Counter(), slow, sizes=sizes
        )
        return [i.index for i in fine], drops, len(seeds), [i.index for i in kept], expected

    shared = _measured(monkeypatch)
    once = mint(golden.Sizes())
    assert once[0] == [3, 4, 6] and once[3] == [0, 1, 2, 3, 4, 6]
    assert len(shared) == 7  # every input's first outcome, once
    # control: each stage measuring for itself encodes the kept outcomes three times over
    alone = _measured(monkeypatch)
    assert mint(None) == once
    assert len(alone) == 4 + 6 + 6
