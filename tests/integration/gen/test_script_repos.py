"""`gen` on a tiny JavaScript repository with a `node:test` file: each of the JS pipeline's gates
on one target of its own, each a positive control of the others (the kept targets pass every
gate): a function and a method minted, a `Math.random` one dropped by the determinism gate, one
whose every recorded outcome is the stub's own throw dropped as the stub earning, a `const`
helper the recorder cannot reach, one the tests never call, one whose recorded calls never reach
its special branch dropped under the kill-rate floor (its mutants survive; `double`'s and
`add`'s, the control, are killed); the declared runner (vitest) noted as not run; widened calls
stored as `double`'s generated inputs and graded (a candidate right on the recorded calls only
fails there); with `--no-strength` no kill rate is recorded and the funnel says so; a Python
package with a package.json still goes to Python's extraction."""

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
function kind(s) {
  if (s === "special") { return s.length * 2 + 1; }
  return 0;
}
const tripled = (a) => a * 3;
class Counter {
  constructor() { this.total = 0; }
  add(n) { this.total += n; return this.total; }
}
module.exports = { double, roll, unfinished, never, kind, Counter, tripleOf: (a) => tripled(a) };
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
test('kind', () => { for (const s of ['a', 'b', 'c']) assert.strictEqual(m.kind(s), 0); });
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
        "index.kind": DropReason.KILL_RATE_BELOW,
    }
    batch = Batch.open(out)
    assert sorted(batch.spec(i).source.symbol for i in batch.ids) == [
        "index.Counter.add",
        "index.double",
    ]
    add = batch.load(batch.resolve("index.Counter.add"))
    assert add.spec.language == "javascript"
    assert all(item.node_call and "this" in item.node_call for item in add.inputs)
    for ident in batch.ids:  # the control of `kind`'s drop: these mutants are killed
        strength = batch.load(ident).hidden.strength
        assert strength is not None and strength.mutants > 0 and strength.kill_rate >= 0.5
    notes = " ".join(funnel["setup_notes"])
    assert "declared for vitest" in notes and "strength unmeasured" not in notes
    _widened_inputs_are_stored_and_graded(out, batch)


RECORDED_ONLY = "function double(a) { return [1, 2, -3, 0.5].includes(a) ? a * 2 : 0; }\n"


def _widened_inputs_are_stored_and_graded(out: Path, batch: Batch) -> None:
    ident = batch.resolve("index.double")
    double = batch.load(ident)
    widened = [i for i in double.inputs if i.provenance == "widened"]
    assert widened and all(i.stratum in ("widened", "raises") for i in widened)
    assert all(i.origin == "fast-check" and i.index in double.expected for i in widened)
    traced = {i.call for i in double.inputs if i.provenance == "traced"} | {
        e.call for e in double.spec.examples
    }
    assert traced <= {"double(1)", "double(2)", "double(-3)", "double(0.5)"}
    candidates = out.parent / "candidates"
    candidates.mkdir()
    right, weak = candidates / "right.js", candidates / "weak.js"
    right.write_bytes(double.original_source())
    weak.write_text(RECORDED_ONLY)
    args = ("grade", "--tasks", str(out), "--task", ident, "--candidate")
    verdicts = [json.loads(run_cli(*args, str(path)).stdout) for path in (right, weak)]
    assert verdicts[0]["reward"] == 1.0, verdicts[0]
    assert verdicts[1]["reward"] < 1.0, verdicts[1]  # wrong on the widened stratum alone
    assert "double(" in json.dumps(verdicts[1]["counterexample"])


def test_no_strength_leaves_javascript_strength_unmeasured_and_says_so(tmp_path: Path) -> None:
    files = {"package.json": MANIFEST, "index.js": INDEX, "test/index.test.js": TESTS}
    repo = make_git_repo(tmp_path / "tiny-js", files)
    out = tmp_path / "batch"
    args = ("--out", str(out), "--json", "--no-strength", "--limit", "1")
    done = run_cli("gen", "--repo", str(repo), *args, timeout=300)
    assert done.returncode == 0, done.stderr
    batch = Batch.open(out)
    (ident,) = batch.ids
    assert batch.load(ident).hidden.strength is None  # not measured, not made up
    assert any("strength unmeasured" in note for note in json.loads(done.stdout)["setup_notes"])


def test_a_python_package_with_a_package_json_is_not_taken_for_javascript(
    tmp_path: Path,
) -> None:
    # the control: the same package.json beside a Python package reaches Python's extraction
    files = {"package.json": MANIFEST, "pyproject.toml": "[project]\nname = 'x'\n", "a.txt": ""}
    repo = make_git_repo(tmp_path / "mixed", files)
    done = run_cli("gen", "--repo", str(repo), "--out", str(tmp_path / "batch"))
    assert done.returncode == 2
    assert done.stderr == f"error: no Python source files found in {repo}\n"
