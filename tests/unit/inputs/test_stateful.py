"""Widened call sequences drawn from recorded ones: bounded, reproducible with a seed, made only of
the recorded rules (a recorded step's pickle, plain slots replaced), and replayed by the runner's
replay part as recipes, with each step's arguments reported."""

from __future__ import annotations

import base64
import pickle
from typing import Any

import pytest

from replicate.core import CallSequence, ClassRef, Ending, Step, StepOutcome
from replicate.inputs import StatefulBudget, widen_sequences
from replicate.inputs.recipes import recipe_parts
from replicate.inputs.stateful import rules_of, slot_values
from replicate.jail.runner.base import EncodeLimits
from replicate.jail.runner.calling import Sequence
from replicate.jail.runner.replay import replay_work
from replicate.jail.sequences import sequence_input
from replicate.values import plain

CLS = ClassRef(path="pkg/stack.py", module="pkg.stack", qualname="Stack")


def _b64(value: Any) -> str:
    return base64.b64encode(pickle.dumps(value, protocol=4)).decode("ascii")


def _recorded(*calls: tuple[str, tuple[Any, ...], dict[str, Any]]) -> CallSequence:
    steps = tuple(
        Step(name=name, args_b64=_b64((args, kwargs)), outcome=StepOutcome.RETURNED)
        for name, args, kwargs in calls
    )
    return CallSequence(cls=CLS, origin="test_stack", steps=steps)


def _arguments(sequence: CallSequence) -> list[Any]:
    """What the reference's replay reports of each step (`Replay.arguments`)."""
    return [plain.encode(pickle.loads(base64.b64decode(s.args_b64))) for s in sequence.steps]


RECORDED = (
    _recorded(("__init__", ([1, 2],), {}), ("push", (3,), {}), ("pop", (), {}), ("peek", (), {})),
    _recorded(("__init__", ([],), {"limit": 4}), ("push", (10,), {}), ("__len__", (), {})),
    _recorded(("__init__", ((),), {}), ("pop", (), {"default": -1})),
)
ARGUMENTS = [_arguments(s) for s in RECORDED]
BUDGET = StatefulBudget(sequences=15, max_steps=8)


def _widened(seed: int = 3, budget: StatefulBudget = BUDGET) -> tuple[CallSequence, ...]:
    return widen_sequences(RECORDED, ARGUMENTS, budget, seed)


def _seed_blob(step: Step) -> bytes:
    """The recorded pickle a widened step is made from (read from the recipe's opcodes)."""
    parts = recipe_parts(step.args_b64)
    return parts.call if parts is not None else base64.b64decode(step.args_b64)


def test_widened_sequences_are_bounded_and_start_with_a_class_call() -> None:
    made = _widened()
    assert 5 <= len(made) <= BUDGET.sequences
    for sequence in made:
        assert 2 <= len(sequence.steps) <= BUDGET.max_steps
        assert sequence.steps[0].name == "__init__"
        assert sequence.ending is Ending.WIDENED and not sequence.visible
        assert {s.outcome for s in sequence.steps} == {StepOutcome.UNRECORDED}
    assert len(_widened(budget=StatefulBudget(sequences=3, max_steps=3))) <= 3
    assert all(len(s.steps) <= 3 for s in _widened(budget=StatefulBudget(3, max_steps=3)))


def test_the_same_seed_draws_the_same_sequences_another_seed_others() -> None:
    assert _widened(seed=3) == _widened(seed=3)
    assert _widened(seed=3) != _widened(seed=4)


def test_rules_are_only_the_recorded_steps() -> None:
    recorded = {(s.name, base64.b64decode(s.args_b64)) for r in RECORDED for s in r.steps}
    made = _widened()
    for sequence in made:
        for step in sequence.steps:
            assert (step.name, _seed_blob(step)) in recorded  # a recorded step's own pickle
    names = {s.name for r in made for s in r.steps}
    assert names <= {"__init__", "push", "pop", "peek", "__len__"}
    assert len(names) >= 4  # the rules are all used, not one
    keys = {tuple(s.args_b64 for s in r.steps) for r in RECORDED}
    assert not keys & {tuple(s.args_b64 for s in r.steps) for r in made}  # all new


def test_plain_slots_are_widened_from_each_methods_observed_values() -> None:
    rules = rules_of(RECORDED, ARGUMENTS)
    assert set(rules.methods) == {"push", "pop", "peek", "__len__"}
    assert {slot for name, slot in rules.slots if name == "__init__"} == {0, "limit"}
    assert {slot for name, slot in rules.slots if name == "pop"} == {"default"}
    patched = [s for r in _widened() for s in r.steps if recipe_parts(s.args_b64) is not None]
    assert patched, "no step has a replaced argument"
    pushed = {
        pickle.loads(base64.b64decode(s.args_b64))[2].get(0)
        for r in _widened()
        for s in r.steps
        if s.name == "push" and recipe_parts(s.args_b64) is not None
    }
    assert pushed - {3, 10, None}  # values the recordings never pushed


def test_a_step_whose_arguments_are_not_reported_keeps_them_whole() -> None:
    assert slot_values({"t": "obj", "v": "?"}) == {}
    bare = widen_sequences(RECORDED, [[] for _ in RECORDED], BUDGET, 3)
    assert bare and all(recipe_parts(s.args_b64) is None for r in bare for s in r.steps)


def test_nothing_is_drawn_without_a_method_to_call() -> None:
    only_built = _recorded(("__init__", ([1],), {}))
    assert widen_sequences([only_built], [_arguments(only_built)], BUDGET, 3) == ()
    assert widen_sequences([], [], BUDGET, 3) == ()


def test_the_runner_replays_a_widened_sequence_and_reports_its_arguments() -> None:
    made = next(r for r in _widened() if any(recipe_parts(s.args_b64) for s in r.steps))
    steps = tuple((s.name, base64.b64decode(s.args_b64)) for s in made.steps)
    work = replay_work(Stack, (Sequence(steps, None),), EncodeLimits(), shown=True)
    assert work is not None
    out = work()
    assert out["status"] == "returned"
    assert len(out["value"]["v"][0]["v"]) == len(steps)
    shown = [slot_values(node) for node in out["args_in"]]
    assert len(shown) == len(steps)
    for step, values in zip(made.steps, shown, strict=True):
        parts = recipe_parts(step.args_b64)
        if parts is not None:  # the replaced values, as the step was called with them
            _, _, positional, keywords = pickle.loads(base64.b64decode(step.args_b64))
            assert {**positional, **keywords}.items() <= values.items()
    quiet = replay_work(Stack, (Sequence(steps, None),), EncodeLimits())
    assert quiet is not None and "args_in" not in quiet()


FED = CallSequence(
    cls=CLS,
    steps=(
        Step(name="__init__", args_b64=_b64((([1],), {})), outcome=StepOutcome.RETURNED),
        Step(name="snapshot", args_b64=_b64(((), {})), outcome=StepOutcome.RETURNED),
        Step(
            name="extend",
            args_b64=_b64((([1],), {})),
            outcome=StepOutcome.RETURNED,
            refs=((0, 1),),
        ),
        Step(
            name="same", args_b64=_b64(((None,), {})), outcome=StepOutcome.RETURNED, refs=((0, 0),)
        ),
    ),
)


def test_a_fed_back_result_is_fed_from_an_earlier_step_of_the_same_name() -> None:
    made = widen_sequences([*RECORDED, FED], [*ARGUMENTS, _arguments(FED)], BUDGET, 5)
    fed = [(r, n, s) for r in made for n, s in enumerate(r.steps) if s.name in ("extend", "same")]
    assert fed
    for sequence, n, step in fed:
        producer = "snapshot" if step.name == "extend" else "__init__"
        earlier = [m for m in range(n) if sequence.steps[m].name == producer]
        assert [m for _, m in step.refs] == ([] if not earlier else [step.refs[0][1]])
        assert all(sequence.steps[m].name == producer for _, m in step.refs)
    assert any(s.refs for _, _, s in fed)


class Stack:
    def __init__(self, items: Any, limit: int = 8) -> None:
        self.items, self.limit = list(items), limit

    def push(self, item: Any) -> Stack:
        self.items.append(item)
        return self

    def pop(self, default: Any = None) -> Any:
        return self.items.pop() if self.items else default

    def snapshot(self) -> list[Any]:
        return self.items

    def extend(self, items: list[Any]) -> bool:
        return items is self.items

    def same(self, other: Any) -> bool:
        return other is self


def test_the_runner_feeds_a_step_the_very_result_of_the_one_its_refs_name() -> None:
    steps = tuple((s.name, base64.b64decode(s.args_b64), s.refs) for s in FED.steps)
    work = replay_work(Stack, (Sequence(steps, None),), EncodeLimits())
    assert work is not None
    got = [plain.decode(node) for node in work()["value"]["v"][0]["v"]]
    assert got[2:] == [("returned", True), ("returned", True)]
    copies = tuple(step[:2] for step in steps)  # the positive control: a copy is not the object
    work = replay_work(Stack, (Sequence(copies, None),), EncodeLimits())
    assert work is not None
    got = [plain.decode(node) for node in work()["value"]["v"][0]["v"]]
    assert got[2:] == [("returned", False), ("returned", False)]


def test_a_widened_sequence_is_an_input_without_recorded_outcomes() -> None:
    made = widen_sequences([*RECORDED, FED], [*ARGUMENTS, _arguments(FED)], BUDGET, 5)
    with pytest.raises(ValueError, match="no recorded outcomes"):
        sequence_input(made[0], 0, recorded=True)
    sequence_input(RECORDED[0], 0, recorded=True)  # the control: a recorded one has them
    fed = next(r for r in made if any(s.refs for s in r.steps))
    _, steps, recorded, _ = pickle.loads(base64.b64decode(sequence_input(fed, 0).pickle_b64))
    assert recorded is None
    assert [step[2] for step in steps if len(step) > 2] == [s.refs for s in fed.steps if s.refs]
