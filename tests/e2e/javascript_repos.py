"""Two pinned npm packages made JavaScript repositories with tests `replicate gen` can run: ms
2.1.3 (CommonJS) and camelcase 8.0.0 (an ES module), from the project's npm cache (`npm pack`
once, `tests/integration/languages/conftest.py`). Their tarballs ship no tests, so each gets a
`node:test` file of its own suite's cases (ms's `tests.js`, camelcase's `test.js`, rewritten from
mocha/expect.js and ava to `node:assert`) and its `test` script made `node --test`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.e2e.conftest import Minted
from tests.integration.languages.conftest import npm_repo
from tests.integration.minted import git

MS_TESTS = """'use strict';
const test = require('node:test');
const assert = require('node:assert');
const ms = require('../index.js');

test('ms(string)', () => {
  assert.strictEqual(ms('100'), 100);
  assert.strictEqual(ms('1m'), 60000);
  assert.strictEqual(ms('1h'), 3600000);
  assert.strictEqual(ms('2d'), 172800000);
  assert.strictEqual(ms('3w'), 1814400000);
  assert.strictEqual(ms('1s'), 1000);
  assert.strictEqual(ms('100ms'), 100);
  assert.strictEqual(ms('1y'), 31557600000);
  assert.strictEqual(ms('1.5h'), 5400000);
  assert.strictEqual(ms('1   s'), 1000);
  assert.strictEqual(ms('☃'), undefined);
  assert.strictEqual(ms('10-.5'), undefined);
  assert.strictEqual(ms('1.5H'), 5400000);
  assert.strictEqual(ms('.5ms'), 0.5);
  assert.strictEqual(ms('-100ms'), -100);
  assert.strictEqual(ms('-1.5h'), -5400000);
  assert.strictEqual(ms('-10.5h'), -37800000);
  assert.strictEqual(ms('-.5h'), -1800000);
});

test('ms(long string)', () => {
  assert.strictEqual(ms('53 milliseconds'), 53);
  assert.strictEqual(ms('17 msecs'), 17);
  assert.strictEqual(ms('1 sec'), 1000);
  assert.strictEqual(ms('1 min'), 60000);
  assert.strictEqual(ms('1 hr'), 3600000);
  assert.strictEqual(ms('2 days'), 172800000);
  assert.strictEqual(ms('1 week'), 604800000);
  assert.strictEqual(ms('1 year'), 31557600000);
  assert.strictEqual(ms('1.5 hours'), 5400000);
  assert.strictEqual(ms('-100 milliseconds'), -100);
  assert.strictEqual(ms('-1.5 hours'), -5400000);
  assert.strictEqual(ms('-.5 hr'), -1800000);
});

test('ms(number, { long: true })', () => {
  assert.strictEqual(ms(500, { long: true }), '500 ms');
  assert.strictEqual(ms(-500, { long: true }), '-500 ms');
  assert.strictEqual(ms(1000, { long: true }), '1 second');
  assert.strictEqual(ms(1200, { long: true }), '1 second');
  assert.strictEqual(ms(10000, { long: true }), '10 seconds');
  assert.strictEqual(ms(-1000, { long: true }), '-1 second');
  assert.strictEqual(ms(60 * 1000, { long: true }), '1 minute');
  assert.strictEqual(ms(60 * 1200, { long: true }), '1 minute');
  assert.strictEqual(ms(60 * 10000, { long: true }), '10 minutes');
  assert.strictEqual(ms(60 * 60 * 1000, { long: true }), '1 hour');
  assert.strictEqual(ms(60 * 60 * 10000, { long: true }), '10 hours');
  assert.strictEqual(ms(24 * 60 * 60 * 1000, { long: true }), '1 day');
  assert.strictEqual(ms(24 * 60 * 60 * 10000, { long: true }), '10 days');
  assert.strictEqual(ms(234234234, { long: true }), '3 days');
  assert.strictEqual(ms(-234234234, { long: true }), '-3 days');
});

test('ms(number)', () => {
  assert.strictEqual(ms(500), '500ms');
  assert.strictEqual(ms(-500), '-500ms');
  assert.strictEqual(ms(1000), '1s');
  assert.strictEqual(ms(10000), '10s');
  assert.strictEqual(ms(-1000), '-1s');
  assert.strictEqual(ms(60 * 1000), '1m');
  assert.strictEqual(ms(60 * 10000), '10m');
  assert.strictEqual(ms(60 * 60 * 1000), '1h');
  assert.strictEqual(ms(60 * 60 * 10000), '10h');
  assert.strictEqual(ms(24 * 60 * 60 * 1000), '1d');
  assert.strictEqual(ms(24 * 60 * 60 * 10000), '10d');
  assert.strictEqual(ms(234234234), '3d');
  assert.strictEqual(ms(-234234234), '-3d');
});

test('ms(invalid inputs)', () => {
  assert.throws(() => ms(''), /val is not a non-empty string/);
  assert.throws(() => ms(undefined), /val is not a non-empty string/);
  assert.throws(() => ms(null), /val is not a non-empty string/);
  assert.throws(() => ms([]), /val is not a non-empty string/);
  assert.throws(() => ms({}), /val is not a non-empty string/);
  assert.throws(() => ms(NaN), /val is not a non-empty string/);
  assert.throws(() => ms(Infinity), /val is not a non-empty string/);
});
"""

CAMELCASE_TESTS = """import test from 'node:test';
import assert from 'node:assert';
import camelCase from '../index.js';

test('camelCase', () => {
  assert.strictEqual(camelCase('foo'), 'foo');
  assert.strictEqual(camelCase('foo-bar'), 'fooBar');
  assert.strictEqual(camelCase('foo-bar-baz'), 'fooBarBaz');
  assert.strictEqual(camelCase('foo--bar'), 'fooBar');
  assert.strictEqual(camelCase('--foo-bar'), 'fooBar');
  assert.strictEqual(camelCase('--foo--bar'), 'fooBar');
  assert.strictEqual(camelCase('FOO-BAR'), 'fooBar');
  assert.strictEqual(camelCase('-foo-bar-'), 'fooBar');
  assert.strictEqual(camelCase('--foo--bar--'), 'fooBar');
  assert.strictEqual(camelCase('foo-1'), 'foo1');
  assert.strictEqual(camelCase('foo.bar'), 'fooBar');
  assert.strictEqual(camelCase('foo_bar'), 'fooBar');
  assert.strictEqual(camelCase('__foo__bar__'), 'fooBar');
  assert.strictEqual(camelCase('foo bar'), 'fooBar');
  assert.strictEqual(camelCase('fooBar'), 'fooBar');
  assert.strictEqual(camelCase('XMLHttpRequest'), 'xmlHttpRequest');
  assert.strictEqual(camelCase('h2w'), 'h2W');
  assert.strictEqual(camelCase('b2b_registration_request'), 'b2bRegistrationRequest');
  assert.strictEqual(camelCase(''), '');
  assert.strictEqual(camelCase(['foo', 'bar']), 'fooBar');
});

test('camelCase with options', () => {
  assert.strictEqual(camelCase('foo-bar', { pascalCase: true }), 'FooBar');
  assert.strictEqual(camelCase('foo_bar baz', { pascalCase: true }), 'FooBarBaz');
  const preserve = { preserveConsecutiveUppercase: true };
  assert.strictEqual(camelCase('XMLHttpRequest', preserve), 'XMLHttpRequest');
  assert.strictEqual(camelCase('lorem-ipsum', { locale: 'en-US' }), 'loremIpsum');
  assert.strictEqual(camelCase('Foo-Bar', { pascalCase: true }), 'FooBar');
  assert.strictEqual(camelCase('fooBAR', preserve), 'fooBAR');
});

test('camelCase rejects what is not a string', () => {
  assert.throws(() => camelCase(1), TypeError);
  assert.throws(() => camelCase(), TypeError);
});
"""

PACKAGES = {
    "ms": ("2.1.3", {"test/index.test.js": MS_TESTS}),
    "camelcase": ("8.0.0", {"test/camelcase.test.js": CAMELCASE_TESTS}),
}


def script_repo(root: Path, name: str) -> Path:
    """Package `name` at its pinned version with its test file, as a git repository under `root`."""
    version, files = PACKAGES[name]
    repo = root / name
    shutil.copytree(npm_repo(name, version), repo, ignore=shutil.ignore_patterns(".git"))
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    manifest = json.loads((repo / "package.json").read_text())
    manifest["scripts"] = {"test": "node --test"}
    (repo / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"{name} {version} with node:test cases")
    return repo


def funnel_table(made: Minted) -> str:
    """A JavaScript gen's funnel: each stage, its drops, the yield and the setup notes."""
    lines = [f"{made.name}: {made.funnel['repo']} @ {made.funnel['commit'][:12]}"]
    for stage in made.funnel["stages"]:
        drops = ", ".join(f"{reason} ({n})" for reason, n in stage["drops"])
        lines.append(f"  {stage['stage']:<14} {stage['count']:>4}  {drops}")
    extracted, validated = made.stage("extracted"), made.stage("validated")
    lines.append(f"  yield {validated}/{extracted} = {validated / max(extracted, 1):.0%}")
    lines += [f"  note: {note}" for note in made.funnel["setup_notes"]]
    return "\n".join(lines)
