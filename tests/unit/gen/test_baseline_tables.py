"""`summarise` scores a lookup table of the visible calls from its program's matches instead of
comparing the table's outcomes again: the same baseline, program by program, as scoring every
table's outcomes (the way it was done before, kept here as the reference), each graded as a
candidate is (a class task's by member and with its call sequences).  Bundled tasks with visible
calls; the programs' outcomes drawn per input from the expected one, another input's expected
one and a raised exception, and their replays of a class task's sequences the reference's or
none."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from replicate.batch import Batch, LoadedTask
from replicate.core import Baseline, DegenerateScore
from replicate.gen.baseline import VISIBLE, behind, summarise, visible_table
from replicate.grading import SequenceScore, graded_score, matches, score_sequences
from replicate.grading.class_sequences import expected_replay
from replicate.jail import Replay

ROOT = Path(__file__).resolve().parents[3]
Outcomes = Mapping[int, Mapping[str, Any]]


def _scored_one_by_one(
    task: LoadedTask, outcomes: Mapping[str, Outcomes], sequences: Mapping[str, SequenceScore]
) -> Baseline:
    """The baseline as it was computed before: every table's outcomes compared afresh (on the
    call sequences, a table earns its program's score)."""
    programs = {**outcomes}
    for name, got in outcomes.items():
        programs[f"{VISIBLE} {name}"] = visible_table(task, got)
    scores = []
    for name, got in programs.items():
        found = matches(task.inputs, task.expected, got, task.hidden.grading)
        raw = graded_score(task, found, sequences.get(behind(name)))[1]
        scores.append(DegenerateScore(program=name, raw_reward=raw))
    ranked = sorted(scores, key=lambda s: (-s.raw_reward, s.program))
    return Baseline(raw_reward=ranked[0].raw_reward if ranked else 0.0, programs=tuple(ranked))


def _programs(task: LoadedTask, seed: int) -> dict[str, Outcomes]:
    chance = random.Random(seed)
    expected = list(task.expected.values())
    raised = {"status": "raised", "exc": {"type": "builtins.ValueError", "msg": ""}, "t": 0.0}
    found: dict[str, Outcomes] = {}
    for n in range(4):
        share = chance.random()
        got: dict[int, Mapping[str, Any]] = {}
        for item in task.inputs:
            pick = chance.random()
            if pick < share:
                got[item.index] = task.expected[item.index]
            elif pick < (1 + share) / 2:
                got[item.index] = chance.choice(expected)
            elif chance.random() < 0.9:  # an input the program gave no outcome for, sometimes
                got[item.index] = raised
        found[f"program {n}"] = got
    return found


def _sequence_scores(task: LoadedTask, names: Iterable[str], seed: int) -> dict[str, SequenceScore]:
    """Each program's score on a class task's call sequences, each replayed as the reference
    did or not at all, at random; none for a task without sequences."""
    chance = random.Random(seed)
    found = {}
    for name in names:
        replays = [
            expected_replay(hidden) if chance.random() < 0.5 else Replay(())
            for hidden in task.sequences
        ]
        score = score_sequences(task, replays)
        if score is not None:
            found[name] = score
    return found


def _with_visible_calls() -> list[LoadedTask]:
    batch = Batch.open(ROOT)
    tasks = [batch.load(ident) for ident in batch.select((), 40)]
    return [t for t in tasks if any(i.provenance == "traced" and i.visible for i in t.inputs)]


@pytest.mark.parametrize("seed", range(3))
def test_tables_scored_from_their_programs_matches_score_the_same(seed: int) -> None:
    tasks = _with_visible_calls()
    assert len(tasks) >= 10
    differ = 0
    for task in tasks:
        outcomes = _programs(task, seed)
        sequences = _sequence_scores(task, outcomes, seed)
        found = summarise(task, outcomes, sequences)
        assert found == _scored_one_by_one(task, outcomes, sequences), task.id
        rewards = {p.program: p.raw_reward for p in found.programs}
        differ += any(rewards[f"{VISIBLE} {name}"] != rewards[name] for name in outcomes)
    # the tables are not their programs over again: on most tasks some table scores otherwise
    assert differ >= len(tasks) // 2


def test_a_task_with_sequences_is_not_summarised_without_each_programs_replay() -> None:
    """Its programs' raw rewards would leave the sequences half out (members alone): too low
    when the programs earn more on the sequences than on the members."""
    task = next(t for t in _with_visible_calls() if t.sequences)
    outcomes = _programs(task, 0)
    with pytest.raises(ValueError, match="not scored"):
        summarise(task, outcomes)
    summarise(task, outcomes, _sequence_scores(task, outcomes, 0))
