"""The harvest's first cut on ms 2.1.3 (CommonJS) and camelcase 8.0.0 (an ES module): a node:test
file in the package runs in the jail under the recorder, which records the distinct calls it
makes to ms's export and to `parse`, a binding the module does not export (camelCase: the binding
of its default export); each replays to the same outcome on the original and fails on the stubbed
file; the budgets hold per test file and per target. The npm tarballs ship no tests: the test
files here are a few of each package's own cases."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from replicate.core import DropReason
from replicate.gen.ledger import read_entries
from replicate.jail.node import CallKind, NodeCall, NodeTarget, Status
from replicate.jail.node_harvest import HarvestBudget, record_tests, replay
from replicate.jail.node_tests import RunnerCommand
from replicate.sandbox import Sandbox, get_sandbox
from replicate.values import javascript as js
from tests.integration.languages.test_npm_calls import (
    NOT_IMPLEMENTED,
    rewritten,
    target_named,
)

DEGENERATE = {
    DropReason.DEGENERATE_ORIGINAL,
    DropReason.DEGENERATE_AT_FLOOR,
    DropReason.DEGENERATE_OVERPAID,
}
HEAD = """'use strict';
const test = require('node:test');
const assert = require('node:assert');
const ms = require('../index.js');
"""
TESTS = """
test('the recorder is unseen', () => {
  assert.strictEqual(process.env.REPLICATE_RECORD, undefined);
});
test('parses strings', () => {
  assert.strictEqual(ms('100'), 100);
  assert.strictEqual(ms('1m'), 60000);
  assert.strictEqual(ms('1h'), 3600000);
  assert.strictEqual(ms('1h'), 3600000);  // made twice, recorded once
  assert.strictEqual(ms('2 days'), 172800000);
  assert.strictEqual(ms('☃'), undefined);
});
test('formats numbers', () => {
  assert.strictEqual(ms(60000), '1m');
  assert.strictEqual(ms(60000, { long: true }), '1 minute');
});
test('throws on bad input', () => {
  assert.throws(() => ms(''), /val is not a non-empty string/);
  assert.throws(() => ms(NaN), /val is not a non-empty string/);
});
"""
EXPORT = NodeTarget("index.js", ())
PARSE = NodeTarget("index.js", (), scope="parse")


@pytest.fixture(scope="module")
def local() -> Sandbox:
    return get_sandbox("local")


def with_tests(npm_repos: dict[str, Path], name: str, dest: Path, files: dict[str, str]) -> Path:
    """A copy of package `name` with `files` (name to text) in its `test/` folder."""
    tree = dest / name
    shutil.copytree(npm_repos[name], tree, ignore=shutil.ignore_patterns(".git"))
    (tree / "test").mkdir()
    for file, text in files.items():
        (tree / "test" / file).write_text(text)
    return tree


def mint_for_notes(tree: Path, out: Path) -> str:
    """`replicate gen --json --no-strength` on `tree` into `out`: its setup notes (printed)."""
    argv = [sys.executable, "-m", "replicate", "gen", "--repo", str(tree), "--out", str(out)]
    done = subprocess.run(
        [*argv, "--json", "--no-strength"], capture_output=True, text=True, timeout=1800
    )
    assert done.returncode == 0, done.stderr[-3000:]
    notes = json.loads(done.stdout)["setup_notes"]
    print("\n".join(notes))
    return " ".join(notes)


def assert_minted_or_degenerate(out: Path, symbol: str) -> None:
    """`symbol`'s recorded calls got it past the harvest: it is a task of the batch `out`, or was
    dropped on its degenerate baseline (ms's parse: fast-check's strings mostly parse to
    undefined, which `return undefined` behind a table of the recorded calls answers)."""
    (entry,) = [e for e in read_entries(out) if e.symbol == symbol]
    assert entry.kept or DropReason.of(entry.reason) in DEGENERATE, entry


def with_runner(tree: Path, test_script: str, dev: dict[str, str]) -> Path:
    """`tree` with its package.json's `test` script and development dependencies replaced."""
    manifest = json.loads((tree / "package.json").read_text())
    manifest["scripts"], manifest["devDependencies"] = {"test": test_script}, dev
    (tree / "package.json").write_text(json.dumps(manifest))
    return tree


def ms_with_tests(npm_repos: dict[str, Path], dest: Path, files: dict[str, str]) -> Path:
    return with_tests(npm_repos, "ms", dest, {n: HEAD + t for n, t in files.items()})


def test_ms_calls_recorded_replay_on_the_original_and_fail_on_the_stub(
    local: Sandbox, npm_repos: dict[str, Path], tmp_path: Path
) -> None:
    tree = ms_with_tests(npm_repos, tmp_path, {"ms.test.js": TESTS})
    harvest = record_tests(local, tree, [EXPORT, PARSE], ["test/ms.test.js"])
    (run,) = harvest.files
    assert (run.exit_code, run.recorded) == (0, 14)  # the tests pass with the recorder in
    parsed = [r.call.args for r in harvest.calls if r.target == PARSE]
    assert parsed == [("100",), ("1m",), ("1h",), ("2 days",), ("☃",)]
    exported = [r for r in harvest.calls if r.target == EXPORT]
    assert len(exported) == 9
    long = js.PlainObject(js.fields({"long": True}))
    assert exported[6].call == NodeCall((js.Num.of(60000), long))
    assert exported[6].outcome.value == "1 minute"
    thrown = exported[7].outcome.thrown
    assert exported[7].outcome.status is Status.RAISED
    assert thrown is not None and "non-empty" in thrown.message
    # the determinism check: every recorded call gives the same outcome again
    assert replay(local, tree, harvest) == tuple(r.outcome for r in harvest.calls)
    stubbed = rewritten(tree, target_named(tree, "index.js", "parse"))
    on_stub = replay(local, tree, harvest, stubbed)
    for recorded, outcome in zip(harvest.calls, on_stub, strict=True):
        through_parse = recorded.target == PARSE or type(recorded.call.args[0]) is str
        if through_parse and recorded.call.args != ("",):
            assert (outcome.status, outcome.thrown) == (Status.RAISED, NOT_IMPLEMENTED)
        else:  # the number formatting and the throw before parse are not parse's
            assert outcome == recorded.outcome


def test_the_budget_per_test_file_and_per_target(
    local: Sandbox, npm_repos: dict[str, Path], tmp_path: Path
) -> None:
    first = "test('a', () => { for (const s of ['1s', '2s', '3s', '4s']) ms(s); });\n"
    second = "test('b', () => { for (const s of ['5s', '6s', '7s']) ms(s); });\n"
    tree = ms_with_tests(npm_repos, tmp_path, {"a.test.js": first, "b.test.js": second})
    budget = HarvestBudget(per_target=3, per_file=2)
    files = ["test/a.test.js", "test/b.test.js"]
    harvest = record_tests(local, tree, [PARSE], files, budget=budget)
    assert [f.recorded for f in harvest.files] == [2, 2]
    kept = [(r.call.args, r.test_file) for r in harvest.calls]
    assert kept == [(("1s",), files[0]), (("2s",), files[0]), (("5s",), files[1])]
    unbounded = record_tests(local, tree, [PARSE], files, budget=HarvestBudget(10, 10))
    assert len(unbounded.calls) == 7  # the positive control: the budgets are what cut it


CAMELCASE_TESTS = """import test from 'node:test';
import assert from 'node:assert';
import camelCase from '../index.js';

test('camelCase', () => {
  assert.strictEqual(camelCase('foo-bar'), 'fooBar');
  assert.strictEqual(camelCase('foo_bar baz', { pascalCase: true }), 'FooBarBaz');
  assert.strictEqual(camelCase(['foo', 'bar']), 'fooBar');
  assert.throws(() => camelCase(1), TypeError);
});
"""


def test_an_es_module_binding_recorded_through_the_hook(
    local: Sandbox, npm_repos: dict[str, Path], tmp_path: Path
) -> None:
    tree = with_tests(npm_repos, "camelcase", tmp_path, {"camelcase.test.js": CAMELCASE_TESTS})
    camel = NodeTarget("index.js", (), scope="camelCase")  # export default function camelCase
    preserve = NodeTarget("index.js", (), scope="preserveCamelCase")  # const: not wrapped
    harvest = record_tests(local, tree, [camel, preserve], ["test/camelcase.test.js"])
    assert [f.exit_code for f in harvest.files] == [0]
    assert [r.target for r in harvest.calls] == [camel] * 4
    assert [r.outcome.value for r in harvest.calls][:3] == ["fooBar", "FooBarBaz", "fooBar"]
    assert replay(local, tree, harvest) == tuple(r.outcome for r in harvest.calls)
    stubbed = rewritten(tree, target_named(tree, "index.js", "camelCase"))
    assert {o.thrown for o in replay(local, tree, harvest, stubbed)} == {NOT_IMPLEMENTED}


MOCHA_TESTS = """const expect = require('expect.js');
const ms = require('..');

describe('ms', function () {
  it('parses', function () {
    expect(ms('1m')).to.be(60000);
    expect(ms('1.5h')).to.be(5400000);
  });
  it('formats', function () {
    expect(ms(500, { long: true })).to.be('500 ms');
  });
  it('throws', function () {
    expect(function () { ms(''); }).to.throwError();
  });
});
"""


def test_a_mocha_test_file_recorded_in_mochas_own_process(
    local: Sandbox, npm_repos: dict[str, Path], mocha_modules: Path, tmp_path: Path
) -> None:
    tree = with_tests(npm_repos, "ms", tmp_path, {"mocha.js": MOCHA_TESTS})
    mocha = RunnerCommand((str(mocha_modules / "mocha" / "bin" / "mocha.js"),), mocha_modules)
    harvest = record_tests(local, tree, [EXPORT, PARSE], ["test/mocha.js"], command=mocha)
    assert [f.exit_code for f in harvest.files] == [0]
    assert [r.call.args for r in harvest.calls if r.target == PARSE] == [("1m",), ("1.5h",)]
    assert len([r for r in harvest.calls if r.target == EXPORT]) == 4
    assert replay(local, tree, harvest) == tuple(r.outcome for r in harvest.calls)


SEMVER_TESTS = """'use strict';
const test = require('node:test');
const assert = require('node:assert');
const compare = require('../functions/compare');
const SemVer = require('../classes/semver');

test('compare', () => {
  assert.strictEqual(compare('1.2.3', '1.2.4'), -1);
  assert.strictEqual(compare('1.2.3-beta.1', '1.2.3'), -1);
  assert.strictEqual(new SemVer('2.0.0').compare('1.9.9'), 1);
});
"""


def test_an_instance_method_recorded_with_its_this(
    local: Sandbox, npm_repos: dict[str, Path], tmp_path: Path
) -> None:
    tree = with_tests(npm_repos, "semver", tmp_path, {"compare.test.js": SEMVER_TESTS})
    compare = NodeTarget("classes/semver.js", (), CallKind.METHOD, "compare")
    harvest = record_tests(local, tree, [compare], ["test/compare.test.js"])
    assert [f.exit_code for f in harvest.files] == [0]
    assert [r.outcome.value for r in harvest.calls] == [js.Num.of(-1), js.Num.of(-1), js.Num.of(1)]
    this = harvest.calls[2].call.this
    assert isinstance(this, js.Instance) and dict(this.fields)["version"] == "2.0.0"
    assert replay(local, tree, harvest) == tuple(r.outcome for r in harvest.calls)
    stubbed = rewritten(tree, target_named(tree, "classes/semver.js", "SemVer.compare"))
    assert {o.thrown for o in replay(local, tree, harvest, stubbed)} == {NOT_IMPLEMENTED}
