"""The JavaScript red team's tasks and its two graders: a tiny CommonJS repository with a
`node:test` file, minted once per module by the real `gen` (five tasks: a number, an array, a
Date, a Map and a Set returned), the naive in-process grader (`naive.cjs`, the positive
control) and ours (`grade_text`: the candidate run by the Node runner in the jail, its values
compared on the host)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from replicate.batch import Batch, LoadedTask
from replicate.cache import cache_root
from replicate.core import Verdict
from replicate.grading import grade_text
from replicate.jail import Jail, context_for, get_sandbox
from replicate.jail.node import node_binary
from tests.integration.minted import make_git_repo, run_cli

NAIVE = Path(__file__).resolve().parent / "naive.cjs"
MANIFEST = json.dumps({"name": "tiny-js", "version": "1.0.0", "scripts": {"test": "node --test"}})
INDEX = """'use strict';
function double(a) { return a * 2; }
function pair(a) { return [a, String(a)]; }
function when(n) { return new Date(n); }
function tally(s) { return new Map([[s, s.length]]); }
function letters(s) { return new Set(s); }
module.exports = { double, pair, when, tally, letters };
"""
TESTS = """'use strict';
const test = require('node:test');
const assert = require('node:assert');
const m = require('../index.js');

test('double', () => {
  for (const [a, b] of [[1, 2], [2, 4], [-3, -6], [0.5, 1]]) assert.strictEqual(m.double(a), b);
});
test('pair', () => {
  for (const a of [1, 2, 3, 7]) assert.deepStrictEqual(m.pair(a), [a, String(a)]);
});
test('when', () => {
  for (const n of [0, 1000, 86400000]) assert.strictEqual(m.when(n).getTime(), n);
});
test('tally', () => {
  for (const s of ['a', 'bb', 'ccc']) assert.strictEqual(m.tally(s).get(s), s.length);
});
test('letters', () => {
  for (const s of ['abc', 'aab', 'zz']) assert.ok(m.letters(s).has(s[0]));
});
"""
FILES = {"package.json": MANIFEST, "index.js": INDEX, "test/index.test.js": TESTS}
SIMPLE = frozenset({"num", "str", "bool", "null", "undefined", "array", "date", "map", "set"})


def mint_tiny(root: Path, extra: Mapping[str, str | bytes] = {}) -> Path:
    """The tiny repository (with `extra` files) minted into `root/batch`; the batch's path."""
    repo = make_git_repo(root / "tiny-js", {**FILES, **extra})
    out = root / "batch"
    done = run_cli("gen", "--repo", str(repo), "--out", str(out), "--no-strength", timeout=300)
    assert done.returncode == 0, done.stderr
    return out


def tasks_by_name(out: Path, verify: bool = True) -> dict[str, LoadedTask]:
    batch = Batch.open(out, verify=verify)
    loaded = (batch.load(ident) for ident in batch.ids)
    return {task.hidden.target.name: task for task in loaded}


def graded(task: LoadedTask, body: str) -> Verdict:
    """Our grade of `body` (a bare definition) on the task, in the local sandbox."""
    jail = Jail(context_for(task.repo, cache_root()), get_sandbox("local"))
    return grade_text(task, body, jail)


def _simple(node: Any) -> bool:
    if not isinstance(node, dict) or node.get("t") not in SIMPLE:
        return False
    if node["t"] == "map":
        return all(_simple(k) and _simple(v) for k, v in node["v"])
    return node["t"] not in ("array", "set") or all(_simple(item) for item in node["v"])


def naive_reward(task: LoadedTask, body: str, scratch: Path) -> float:
    """The naive grader's reward for `body`: 1.0 on exit code 0, else the share of the cases
    without a FAIL line (the cases whose values it can build: most of the task's)."""
    tree = scratch / "tree"
    shutil.copytree(task.repo.tree, tree)
    target = task.hidden.target
    spliced = task.language().splice(task.stubbed_source(), body, target)
    (tree / target.path).write_bytes(spliced)
    cases = []
    for item in task.inputs:
        outcome = task.expected[item.index]
        args = (item.node_call or {}).get("args", [])
        want = outcome.get("value") if outcome.get("status") == "returned" else None
        if all(_simple(a) for a in args) and (want is None or _simple(want)):
            cases.append({"args": args, "want": want})
    assert len(cases) >= len(task.inputs) // 2, "too few cases the naive grader can build"
    (scratch / "cases.json").write_text(json.dumps(cases))
    argv = [str(node_binary()), str(NAIVE), str(tree / target.path), target.name]
    done = subprocess.run(
        [*argv, str(scratch / "cases.json")], capture_output=True, text=True, timeout=60
    )
    if done.returncode == 0:
        return 1.0
    return 1 - done.stdout.count("FAIL ") / len(cases)
