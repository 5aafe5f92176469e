"""The two searches of a JavaScript task's gen, on a tiny repository minted by the real `gen`,
each task cut to its recorded calls (its widened inputs, which may already do what a search
does, taken out):

- the survivor search (`gen/javascript_strength.py`): `clampPercent`'s test calls it on numbers
  of one sign only, so some mutants survive them (the positive control: the search off); the
  search draws more calls, keeps those the original answers alike under the determinism gate,
  and adds the few that kill survivors, after which the grader itself kills those mutants;
- the separating search (`gen/javascript_separate.py`): `isEven`'s test calls it on five even
  numbers and one odd, so `return true` reaches the constants' floor and the task would be
  dropped (the control); the search adds odd numbers and the task stands, its baseline under
  the floor, the reference still 1.0 on every input.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from replicate.batch import Batch, LoadedTask
from replicate.core import DropReason
from replicate.gen import javascript_baseline as baseline
from replicate.gen import javascript_separate as separate
from replicate.gen import javascript_strength as strength
from replicate.gen.javascript_drawn import with_inputs
from replicate.gen.target import Dropped
from replicate.grading import javascript as graded
from replicate.sandbox import Sandbox, get_sandbox
from tests.integration.minted import make_git_repo, run_cli

INDEX = """'use strict';
function clampPercent(n) {
  if (n < 0) return 0;
  if (n > 100) return 100;
  return Math.round(n);
}
function isEven(n) {
  return n % 2 === 0;
}
module.exports = { clampPercent, isEven };
"""
TESTS = """'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { clampPercent, isEven } = require('../index.js');
test('clampPercent', () => {
  for (const [n, want] of [[5.4, 5], [50, 50], [99.6, 100], [250, 100], [1000, 100], [7, 7]]) {
    assert.strictEqual(clampPercent(n), want);
  }
});
test('isEven', () => {
  for (const n of [2, 4, 10, 8, 6]) assert.strictEqual(isEven(n), true);
  assert.strictEqual(isEven(3), false);
});
"""
FILES = {
    "package.json": json.dumps({"name": "clamp", "version": "1.0.0"}),
    "index.js": INDEX,
    "test/index.test.js": TESTS,
}


@pytest.fixture(scope="module")
def minted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, LoadedTask]:
    """The tiny repository's tasks, minted without strength, by target name."""
    root = tmp_path_factory.mktemp("searches-js")
    repo = make_git_repo(root / "clamp", FILES)
    out = root / "batch"
    done = run_cli("gen", "--repo", str(repo), "--out", str(out), "--no-strength", timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    batch = Batch.open(out)
    loaded = [batch.load(i) for i in batch.ids]
    return {task.hidden.target.name: task for task in loaded}


def traced(task: LoadedTask) -> LoadedTask:
    """The task cut to its recorded calls."""
    kept = tuple(i for i in task.inputs if i.provenance == "traced")
    expected = {i.index: task.expected[i.index] for i in kept}
    return dataclasses.replace(task, inputs=kept, expected=expected)


@pytest.fixture(scope="module")
def local() -> Sandbox:
    return get_sandbox("local")


def test_the_search_adds_inputs_that_kill_survivors(
    minted: dict[str, LoadedTask], local: Sandbox
) -> None:
    cut = traced(minted["clampPercent"])
    assert cut.inputs and not any(i.call.startswith("clampPercent(-") for i in cut.inputs)
    control = strength.measure(cut, local, 0.5, 1.0, search=None)
    before = control.strength
    assert before.killed < before.mutants, "no survivor on the recorded calls: nothing to hunt"
    assert control.added == () and before.added_inputs == before.searched_inputs == 0

    hunted = strength.measure(cut, local, 0.5, 1.0)
    after = hunted.strength
    assert after.mutants == before.mutants and after.killed_before == before.killed
    assert after.searched_inputs > 0 and 1 <= after.added_inputs <= len(hunted.added)
    assert after.killed > before.killed
    assert after.kill_rate == round(after.killed / after.mutants, 6)
    assert all(item.provenance == "widened" and not item.visible for item, _ in hunted.added)
    taken = {i.index for i in cut.inputs}
    assert not taken & {item.index for item, _ in hunted.added}

    grown = with_inputs(cut, hunted.added, cut.spec.language)
    reference = graded.score_script(grown, graded.run_script(grown, local, None))
    assert reference.reward == 1.0
    survivors = [m for m in strength.task_mutants(cut) if not strength.killed(cut, local, m, 10.0)]
    now_killed = [m for m in survivors if strength.killed(grown, local, m, 10.0)]
    assert len(now_killed) == after.killed - before.killed


def test_the_search_adds_inputs_that_tell_a_task_from_a_constant(
    minted: dict[str, LoadedTask], local: Sandbox
) -> None:
    cut = traced(minted["isEven"])
    assert [i.call for i in cut.inputs][-1] == "isEven(3)"  # two even calls are examples
    before = baseline.baseline(cut, local)
    dropped = baseline.judged(before, len(cut.inputs))
    assert dropped is not None and DropReason.of(dropped.reason) is DropReason.DEGENERATE_AT_FLOOR
    assert before.programs[0].raw_reward >= 0.7  # `return true`, right on all but isEven(3)

    kept = separate.under_the_floor(cut, local, cut.spec.language)
    assert not isinstance(kept, Dropped), kept
    grown, found = kept
    added = grown.inputs[len(cut.inputs) :]
    assert added and all(i.provenance == "widened" and not i.visible for i in added)
    assert any(grown.expected[i.index]["value"] == {"t": "bool", "v": False} for i in added)
    assert baseline.judged(found, len(grown.inputs)) is None
    assert found.raw_reward < before.raw_reward
    reference = graded.score_script(grown, graded.run_script(grown, local, None))
    assert reference.reward == 1.0
