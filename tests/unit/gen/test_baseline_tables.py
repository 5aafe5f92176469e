"""`summarise` scores a lookup table of the visible calls from its program's matches instead of
comparing the table's outcomes again: the same baseline, program by program, as scoring every
table's outcomes (the way it was done before, kept here as the reference).  Bundled tasks with
visible calls; the programs' outcomes drawn per input from the expected one, another input's
expected one and a raised exception."""

from __future__ import annotations

import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from replicate.batch import Batch, LoadedTask
from replicate.core import Baseline, DegenerateScore
from replicate.gen.baseline import VISIBLE, summarise, visible_table
from replicate.grading import score

ROOT = Path(__file__).resolve().parents[3]
Outcomes = Mapping[int, Mapping[str, Any]]


def _scored_one_by_one(task: LoadedTask, outcomes: Mapping[str, Outcomes]) -> Baseline:
    """The baseline as it was computed before: every table's outcomes compared afresh."""
    programs = {**outcomes}
    for name, got in outcomes.items():
        programs[f"{VISIBLE} {name}"] = visible_table(task, got)
    scores = [
        DegenerateScore(
            program=name,
            raw_reward=score(task.inputs, task.expected, got, task.hidden.grading).reward,
        )
        for name, got in programs.items()
    ]
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
        found = summarise(task, outcomes)
        assert found == _scored_one_by_one(task, outcomes), task.id
        rewards = {p.program: p.raw_reward for p in found.programs}
        differ += any(rewards[f"{VISIBLE} {name}"] != rewards[name] for name in outcomes)
    # the tables are not their programs over again: on most tasks some table scores otherwise
    assert differ >= len(tasks) // 2
