"""A class task's call sequences: scored step by step per stratum (per class, a module task's)
and combined with its members' reward, a failing prefix shrunk by dropping steps (never the
class call, nor a step a later one is fed), rendered from the reference's replay."""

from __future__ import annotations

import base64
import pickle
from types import SimpleNamespace
from typing import Any, cast

import pytest

from replicate.batch import LoadedTask
from replicate.core import (
    CallSequence,
    ClassRef,
    GradingSettings,
    HiddenSequence,
    SequenceStratum,
    Step,
    StepOutcome,
)
from replicate.grading.class_sequences import (
    SEQUENCE_SHARE,
    combined,
    dropped,
    rendered,
    score_sequences,
    steadied,
    tabled,
)
from replicate.jail import Replay
from replicate.jail.runner.encoding import encode

CLS = ClassRef(path="pkg/box.py", module="pkg.box", qualname="Box")


def _b64(value: Any) -> str:
    return base64.b64encode(pickle.dumps(value, protocol=4)).decode("ascii")


def _step(name: str, *args: Any, refs: tuple[tuple[int | str, int], ...] = ()) -> Step:
    return Step(
        name=name,
        args_b64=_b64((args, {})),
        outcome=StepOutcome.RETURNED,
        result_b64=_b64(None),
        refs=refs,
    )


def _sequence(*steps: Step) -> CallSequence:
    return CallSequence(cls=CLS, steps=(_step("__init__"), *steps))


def _returned(value: Any) -> dict[str, Any]:
    return {"status": "returned", "value": encode(("returned", value)), "args": [], "kwargs": {}}


def _hidden(index: int, stratum: SequenceStratum, *values: Any) -> HiddenSequence:
    sequence = _sequence(*(_step("add", v) for v in values[1:]))
    steps = tuple(_returned(v) for v in values)
    return HiddenSequence(index=index, stratum=stratum, sequence=sequence, steps=steps)


def _task(*hidden: HiddenSequence) -> LoadedTask:
    return cast(
        LoadedTask,
        SimpleNamespace(sequences=hidden, hidden=SimpleNamespace(grading=GradingSettings())),
    )


def _got(*values: Any) -> Replay:
    return Replay(tuple(_returned(v) for v in values))


def test_a_hidden_sequence_has_one_expected_outcome_a_step() -> None:
    with pytest.raises(ValueError):
        HiddenSequence(
            index=0,
            stratum=SequenceStratum.RECORDED,
            sequence=_sequence(_step("add", 1)),
            steps=(_returned(None),),
        )


def test_sequences_are_scored_per_stratum_then_combined_with_the_members() -> None:
    recorded = [_hidden(0, SequenceStratum.RECORDED, None, 1, 2, 3)]
    widened = [_hidden(n, SequenceStratum.WIDENED, None, 1) for n in (1, 2)]
    task = _task(*recorded, *widened)
    # recorded: 2 of 4 steps (the third differs, so the fourth is not compared); widened: one
    # sequence whole (2 of 2), one failing at its second step (1 of 2)
    score = score_sequences(task, [_got(None, 1, 9, 3), _got(None, 1), _got(None, 5)])
    assert score is not None
    assert [c.matched for c in score.comparisons] == [2, 2, 1]
    assert score.reward == pytest.approx((2 / 4 + (1 + 1 / 2) / 2) / 2)
    assert score.failed == 2 and score.first_failing == 0
    assert combined(1.0, score) == pytest.approx(1 - SEQUENCE_SHARE + SEQUENCE_SHARE * score.reward)
    assert combined(0.7, None) == 0.7  # a task without sequences: its members alone
    assert score_sequences(_task(), []) is None
    # a replay that gave nothing (the run ended) is a failure at the class call, not an error
    short = score_sequences(task, [_got(None, 1, 2, 3)])
    assert short is not None and [c.matched for c in short.comparisons] == [4, 0, 0]


def test_a_module_tasks_sequences_weigh_each_class_alike() -> None:
    # a module task's sequences are its file's classes': Box has three (all pass), Bag one
    # (half its steps): the score is the mean of the classes' scores, not of the sequences'
    boxes = [_hidden(n, SequenceStratum.RECORDED, None, 1) for n in range(3)]
    bag = _hidden(3, SequenceStratum.RECORDED, None, 1)
    other = CLS.model_copy(update={"qualname": "Bag"})
    bag = bag.model_copy(update={"sequence": bag.sequence.model_copy(update={"cls": other})})
    task = _task(*boxes, bag)
    score = score_sequences(task, [_got(None, 1), _got(None, 1), _got(None, 1), _got(None, 5)])
    assert score is not None and [c.matched for c in score.comparisons] == [2, 2, 2, 1]
    assert score.reward == pytest.approx((1 + 1 / 2) / 2)  # by sequence it would be 7 / 8
    assert score.first_failing == 3


def test_a_sequence_that_passes_in_one_run_and_fails_in_the_other_is_a_flip() -> None:
    task = _task(
        _hidden(0, SequenceStratum.RECORDED, None, 1), _hidden(1, SequenceStratum.WIDENED, None, 2)
    )
    assert steadied(task, [_got(None, 1), _got(None, 2)], [_got(None, 1), _got(None, 3)])[0] == 1
    flips, score = steadied(task, [_got(None, 1), _got(None, 2)], [_got(None, 1), _got(None, 2)])
    assert flips == 0 and score is not None and score.reward == 1.0
    # a sequence that gave no steps in one run (it timed out) is no flip, and is scored on the
    # run where it finished
    stalled = Replay((), problem="timeout: after 5 s")
    flips, score = steadied(task, [_got(None, 1), stalled], [_got(None, 1), _got(None, 2)])
    assert flips == 0 and score is not None and score.reward == 1.0
    flips, score = steadied(task, [_got(None, 1), stalled], [_got(None, 1), stalled])
    assert flips == 0 and score is not None and score.failed == 1  # a hang hangs twice


def test_a_dropped_step_moves_the_later_steps_refs_and_a_fed_step_stays() -> None:
    sequence = _sequence(_step("add", 1), _step("make"), _step("use", refs=((0, 2),)))
    assert dropped(sequence, 2) is None  # `use` is fed what `make` returned
    shorter = dropped(sequence, 1)
    assert shorter is not None
    assert [s.name for s in shorter.steps] == ["__init__", "make", "use"]
    assert shorter.steps[2].refs == ((0, 1),)  # renumbered: `make` is step 1 now
    with_self = _sequence(_step("add", 1), _step("merge", refs=((0, 0),)))
    assert dropped(with_self, 1) is not None  # fed the instance (step 0), which stays


def test_a_sequence_is_rendered_from_the_reference_replay() -> None:
    sequence = _sequence(_step("add", 1), _step("pop"))
    shown = Replay(
        (_returned(None), _returned(None), _returned(1)),
        arguments=(encode(((3,), {"k": 2})), encode(((1,), {})), encode(((), {}))),
    )
    text = rendered(sequence, shown)
    assert text == "x = Box(3, k=2); x.add(1) -> None; x.pop() -> 1"


def test_a_table_of_the_visible_sequences_answers_them_and_the_steps_others_share() -> None:
    seen = _hidden(0, SequenceStratum.RECORDED, None, 1, 2, 3)
    widened = _hidden(1, SequenceStratum.WIDENED, None, 1, 5, 7)  # shares the class call, add(1)
    unseen = _hidden(2, SequenceStratum.RECORDED, None, 4)  # recorded, but not visible
    unseen = unseen.model_copy(
        update={"sequence": unseen.sequence.model_copy(update={"visible": False})}
    )
    task = _task(seen, widened, unseen)
    nothing = [_got(None, None, None, None), _got(None, None, None, None), _got(None, None)]
    bare = score_sequences(task, nothing)
    table = score_sequences(task, tabled(task, nothing))
    assert bare is not None and table is not None
    assert [c.matched for c in bare.comparisons] == [1, 1, 1]
    assert [c.matched for c in table.comparisons] == [4, 2, 1]  # all; the shared two; the call
    assert table.reward > bare.reward
    # a sequence nobody can see is answered by nothing but the class behind the table
    hidden_only = _task(unseen)
    assert tabled(hidden_only, nothing[2:]) == tuple(nothing[2:])
