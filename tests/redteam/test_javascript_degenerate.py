"""Degenerate JavaScript candidates against the baseline (`gen/javascript_baseline.py`): the
tiny repository (`javascript/minted.py`) with `isAnswer(n)` (n === 42) added, minted twice by
the real `gen`: once with the baseline check switched off (the positive control: what every
JavaScript task was before it) and once as it is.

- A real lookup table of `double`'s recorded calls (the calls its test file makes, in the
  agent's workspace), in front of `return a`: without a baseline it earns its raw share (the
  attack pays), with the task's baseline nothing; its raw share is the one gen derived for that
  table.
- `return false` on `isAnswer`: without the check the task is minted and the constant earns
  ~0.9 or more; with it the task is dropped at the constants' floor, Python's reason in the
  funnel.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from replicate.batch import LoadedTask
from replicate.gen import javascript_families as families
from replicate.gen.baseline import VISIBLE
from replicate.grading import MAX_CONSTANT_BASELINE, MAX_DEGENERATE_REWARD
from replicate.jail import node
from tests.integration.minted import REPO_ROOT, make_git_repo, run_cli
from tests.redteam.javascript.minted import FILES, INDEX, graded, tasks_by_name

pytestmark = pytest.mark.e2e

ANSWER = "function isAnswer(n) { return n === 42; }\n"
ANSWER_TESTS = """'use strict';
const test = require('node:test');
const assert = require('node:assert');
const m = require('../index.js');
test('isAnswer', () => {
  for (const n of [1, 2, 42, 7, 8]) assert.strictEqual(m.isAnswer(n), n === 42);
});
"""
EXTRA = {
    "index.js": INDEX.replace("module.exports = {", ANSWER + "module.exports = { isAnswer,"),
    "test/answer.test.js": ANSWER_TESTS,
}
# `gen` with the baseline check off: every task minted with a baseline of 0 (raw rewards)
UNCHECKED = (
    "import sys\n"
    "from replicate.core import Baseline\n"
    "from replicate.gen import javascript_separate\n"
    "javascript_separate.under_the_floor = lambda task, sandbox, language, warm: (\n"
    "    task, Baseline(raw_reward=0.0))\n"
    "from replicate.cli.main import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)
MIN_CONSTANT_RAW = 0.8  # false is the answer on 4 of its 5 recorded calls and fast-check's
MIN_TABLE_RAW = 0.3  # a table of the recorded calls answers the traced stratum: a third


def _mint(root: Path, checked: bool) -> Path:
    repo = make_git_repo(root / "tiny-js", {**FILES, **EXTRA})
    out = root / "batch"
    args = ("gen", "--repo", str(repo), "--out", str(out), "--no-strength")
    if checked:
        done = run_cli(*args, timeout=300)
    else:
        script = root / "unchecked.py"
        script.write_text(UNCHECKED)
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        done = subprocess.run(
            [sys.executable, str(script), *args],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def batches(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Path]:
    return {
        checked: _mint(tmp_path_factory.mktemp(f"checked-{checked}"), checked)
        for checked in (False, True)
    }


def table_candidate(task: LoadedTask, name: str, fallback: str) -> str:
    """A definition of `name` answering each recorded call of the task exactly (its arguments
    compared by `Object.is` or their JSON) and otherwise running `fallback`."""
    rows = []
    for item in task.inputs:
        if item.provenance != "traced":
            continue
        call = node.read_call(item.node_call or {})
        outcome = node.read_outcome(task.expected[item.index])
        args = [families.literal(a) for a in call.args]
        value = families.literal(outcome.value) if outcome.value is not None else None
        if None in args or value is None or outcome.status is not node.Status.RETURNED:
            continue
        rows.append(f"[[{', '.join(args)}], () => {value}]")  # type: ignore[arg-type]
    assert rows, "no recorded call a table can answer"
    return (
        f"function {name}(...args) {{\n"
        "  const same = (a, b) => Object.is(a, b) || (typeof a === 'object' && a !== null\n"
        "    && JSON.stringify(a) === JSON.stringify(b));\n"
        f"  const table = [{', '.join(rows)}];\n"
        "  for (const [want, answer] of table) {\n"
        "    if (want.length === args.length && want.every((w, i) => same(w, args[i]))) "
        "return answer();\n"
        "  }\n"
        f"  {fallback}\n"
        "}\n"
    )


def test_a_table_of_the_recorded_calls_pays_without_the_baseline_and_not_with_it(
    batches: dict[bool, Path],
) -> None:
    task = tasks_by_name(batches[True])["double"]
    found = task.hidden.baseline
    assert found is not None and found.raw_reward > 0
    attack = table_candidate(task, "double", "return args[0];")
    # the positive control: graded as before the baseline (none recorded), the table pays
    unguarded = dataclasses.replace(task, hidden=task.hidden.model_copy(update={"baseline": None}))
    control = graded(unguarded, attack)
    assert control.status == "graded" and control.reward == control.raw_reward
    assert control.raw_reward is not None and control.raw_reward >= MIN_TABLE_RAW
    verdict = graded(task, attack)
    print(
        f"double: table raw {verdict.raw_reward}, baseline {found.raw_reward}, "
        f"normalised {verdict.reward}"
    )
    assert verdict.raw_reward == control.raw_reward
    assert verdict.reward is not None and verdict.reward <= MAX_DEGENERATE_REWARD
    derived = {p.program: p.raw_reward for p in found.programs}[f"{VISIBLE} return a"]
    assert verdict.raw_reward == pytest.approx(derived, abs=1e-6)  # gen's table, run for real


def test_a_constant_task_pays_without_the_check_and_is_dropped_with_it(
    batches: dict[bool, Path],
) -> None:
    unchecked = tasks_by_name(batches[False])
    assert unchecked["isAnswer"].hidden.baseline is not None
    control = graded(unchecked["isAnswer"], "function isAnswer(n) { return false; }")
    print(f"isAnswer unchecked: return false earns {control.reward} (raw {control.raw_reward})")
    assert control.raw_reward is not None and control.reward == control.raw_reward
    assert control.raw_reward >= MIN_CONSTANT_RAW
    assert "isAnswer" not in tasks_by_name(batches[True])
    rows = (batches[True] / "funnel.jsonl").read_text().splitlines()
    (row,) = [r for r in map(json.loads, rows) if r["symbol"] == "index.isAnswer"]
    print(f"isAnswer checked: {row['reason']}: {row['detail']}")
    assert not row["kept"] and row["reason"].startswith("a degenerate program")
    assert f"scores {MAX_CONSTANT_BASELINE} or more" in row["reason"]
    assert set(tasks_by_name(batches[True])) == {"double", "pair", "when", "tally", "letters"}
