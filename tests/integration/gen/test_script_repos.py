"""`gen` on a tiny JavaScript repository with a `node:test` file: each of the JS pipeline's gates
on one target of its own, each a positive control of the others (the kept targets pass every
gate): a function and a method minted, a `Math.random` one dropped by the determinism gate, one
whose every recorded outcome is the stub's own throw dropped as the stub earning, a `const`
helper the recorder cannot reach, one the tests never call; the declared runner (vitest) noted
as not run; a Python package with a package.json still goes to Python's extraction."""

from __future__ import annotations

import json
from pathlib import Path

from replicate.batch import Batch
from replicate.core import DropReason
from replicate.gen.ledger import read_entries
from tests.integration.minted import make_git_repo, run_cli

MANIFEST = json.dumps({"name": "tiny-js", "version": "1.0.0", "scripts": {"test": "vitest run"}})
INDEX = """'use strict';
function double(a) { return a * 2; }
function roll(n) { return n + Math.random(); }
function unfinished(x) { throw new Error("not implemented"); }
function never(x) { return x; }
const tripled = (a) => a * 3;
class Counter {
  constructor() { this.total = 0; }
  add(n) { this.total += n; return this.total; }
}
module.exports = { double, roll, unfinished, never, Counter, tripleOf: (a) => tripled(a) };
"""
TESTS = """'use strict';
const test = require('node:test');
const assert = require('node:assert');
const m = require('../index.js');

test('double', () => {
  for (const [a, b] of [[1, 2], [2, 4], [-3, -6], [0.5, 1]]) assert.strictEqual(m.double(a), b);
});
test('roll', () => { for (const n of [1, 2, 3]) assert.ok(m.roll(n) >= n); });
test('unfinished', () => { for (const x of [1, 2, 3]) assert.throws(() => m.unfinished(x)); });
test('tripled', () => { for (const x of [1, 2, 3]) assert.strictEqual(m.tripleOf(x), 3 * x); });
test('Counter', () => {
  const c = new m.Counter();
  assert.deepStrictEqual([c.add(1), c.add(2), c.add(3)], [1, 3, 6]);
});
"""


def test_gen_mints_a_javascript_repository_through_every_gate(tmp_path: Path) -> None:
    files = {"package.json": MANIFEST, "index.js": INDEX, "test/index.test.js": TESTS}
    repo = make_git_repo(tmp_path / "tiny-js", files)
    out = tmp_path / "batch"
    done = run_cli("gen", "--repo", str(repo), "--out", str(out), "--json", timeout=300)
    assert done.returncode == 0, done.stderr
    funnel = json.loads(done.stdout)
    reasons = {e.symbol: DropReason.of(e.reason) for e in read_entries(out) if not e.kept}
    assert reasons == {
        "index.roll": DropReason.TOO_FEW_DETERMINISTIC,
        "index.unfinished": DropReason.STUB_EARNS,
        "index.tripled": DropReason.NOT_REACHABLE,
        "index.never": DropReason.NOT_CALLED,
    }
    batch = Batch.open(out)
    assert sorted(batch.spec(i).source.symbol for i in batch.ids) == [
        "index.Counter.add",
        "index.double",
    ]
    add = batch.load(batch.resolve("index.Counter.add"))
    assert add.spec.language == "javascript" and add.hidden.strength is None
    assert all(item.node_call and "this" in item.node_call for item in add.inputs)
    notes = " ".join(funnel["setup_notes"])
    assert "declared for vitest" in notes and "strength unmeasured" in notes


def test_a_python_package_with_a_package_json_is_not_taken_for_javascript(
    tmp_path: Path,
) -> None:
    # the control: the same package.json beside a Python package reaches Python's extraction
    files = {"package.json": MANIFEST, "pyproject.toml": "[project]\nname = 'x'\n", "a.txt": ""}
    repo = make_git_repo(tmp_path / "mixed", files)
    done = run_cli("gen", "--repo", str(repo), "--out", str(tmp_path / "batch"))
    assert done.returncode == 2
    assert done.stderr == f"error: no Python source files found in {repo}\n"
