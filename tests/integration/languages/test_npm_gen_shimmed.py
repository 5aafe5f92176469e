"""`replicate gen` on camelcase 8.0.0 (an ES module: `"type": "module"`) with its package.json's
test runner made vitest 2, then ava 6, and one test file for it (none of the allowed packages
ships a vitest or ava suite in its tarball).

- vitest runs a file through vite's module graph in a worker, which the recorder cannot reach:
  gen runs it as a Node script whose `import ... from 'vitest'` resolves to vitest's API on
  node:test, made with the `@vitest/expect` and `@vitest/spy` vitest installed
  (`runner_js/vitest.mjs`): `it.each`, a test handed vitest's context, `vi.fn`.
- ava runs each file in a worker of its own and refuses to load outside it: gen runs it as a
  Node script whose `ava` (imported, or required: ms with a CommonJS ava file) is ava's API on
  node:test (`runner_js/ava.cjs`): `t.is`, `t.deepEqual`, `t.throws` with ava's expectation
  object, a macro, `t.context` from `beforeEach`, `test.cb`.

Each mints from its calls and says how it ran them. Positive control: without the preload the
same file fails under node (the real runner refuses) and nothing is recorded from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.jail.node import NodeTarget
from tests.integration.languages.preloaded import assert_mints, assert_records_only_with_it
from tests.integration.languages.test_npm_harvest import with_runner, with_tests

VITEST_TESTS = """import { describe, it, test, expect, vi, beforeEach } from 'vitest';
import camelCase from '../index.js';

let runs = 0;
beforeEach(() => { runs += 1; });

describe('camelCase', () => {
  it('converts', () => {
    expect(camelCase('foo-bar')).toBe('fooBar');
    expect(camelCase('foo_bar')).toBe('fooBar');
    expect(camelCase('Foo-Bar')).toBe('fooBar');
    expect(camelCase('--foo.bar')).toBe('fooBar');
  });
  it.each([['foo bar', 'fooBar'], ['XMLHttpRequest', 'xmlHttpRequest'], ['', '']])(
    'camelCase(%s)', (input, output) => { expect(camelCase(input)).toEqual(output); });
  test('pascal case, through the context', ({ expect }) => {
    expect(camelCase('foo-bar', { pascalCase: true })).toBe('FooBar');
    expect(camelCase(['foo', 'bar'])).toBe('fooBar');
  });
  test('a spy', () => {
    const convert = vi.fn(camelCase);
    convert('a-b');
    expect(convert).toHaveBeenCalledWith('a-b');
    expect(convert.mock.results[0].value).toBe('aB');
    expect(runs).toBeGreaterThan(0);
  });
});
"""
AVA_TESTS = """import test from 'ava';
import camelCase from '../index.js';

test.beforeEach((t) => {
  t.context.pascal = { pascalCase: true };
});

test('camelCase', (t) => {
  t.is(camelCase('foo-bar'), 'fooBar');
  t.is(camelCase('foo_bar'), 'fooBar');
  t.is(camelCase('Foo-Bar'), 'fooBar');
  t.is(camelCase('--foo.bar'), 'fooBar');
  t.deepEqual([camelCase('a-b'), camelCase('')], ['aB', '']);
});

test('pascalCase from the context', (t) => {
  t.is(camelCase('foo-bar', t.context.pascal), 'FooBar');
  t.truthy(camelCase(['foo', 'bar']));
});

test('invalid input', (t) => {
  t.throws(() => camelCase(1), { instanceOf: TypeError, message: /Expected the input/ });
});

const converts = test.macro((t, input, expected) => {
  t.is(camelCase(input), expected);
});
test('macro: spaces', converts, 'foo bar', 'fooBar');
test('macro: acronyms', converts, 'XMLHttpRequest', 'xmlHttpRequest');
"""
# runner -> (its test file, the package.json's test script, the runner pinned)
SUITES = {
    "vitest": (VITEST_TESTS, "vitest run", "2.1.9"),
    "ava": (AVA_TESTS, "ava", "6.2.0"),
}
CAMEL = NodeTarget("index.js", (), scope="camelCase")


@pytest.fixture(scope="module", params=sorted(SUITES))
def suite(
    request: pytest.FixtureRequest,
    npm_repos: dict[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[str, Path]:
    runner = request.param
    text, script, version = SUITES[runner]
    root = tmp_path_factory.mktemp(runner)
    tree = with_tests(npm_repos, "camelcase", root, {"camelcase.test.js": text})
    return runner, with_runner(tree, script, {runner: version})


def test_the_suite_mints_with_its_runners_api(suite: tuple[str, Path], tmp_path: Path) -> None:
    runner, tree = suite
    installed = f"{runner}@{SUITES[runner][2]}"
    assert_mints(tree, tmp_path / "batch", runner, installed, "index.camelCase")


def test_without_the_api_the_file_records_nothing(suite: tuple[str, Path]) -> None:
    runner, tree = suite
    assert_records_only_with_it(tree, runner, CAMEL, "test/camelcase.test.js", 8)


CJS_TESTS = """const test = require('ava');
const ms = require('..');

test('ms', (t) => {
  t.is(ms('1m'), 60000);
  t.is(ms('2 days'), 172800000);
  t.is(ms(60000, { long: true }), '1 minute');
});

test.cb('the old callback form', (t) => {
  setTimeout(() => { t.is(ms('1s'), 1000); t.end(); }, 1);
});
"""


def test_a_commonjs_file_requires_the_same_api(npm_repos: dict[str, Path], tmp_path: Path) -> None:
    tree = with_runner(
        with_tests(npm_repos, "ms", tmp_path, {"ms.test.js": CJS_TESTS}), "ava", {"ava": "6.2.0"}
    )
    parse = NodeTarget("index.js", (), scope="parse")
    assert_records_only_with_it(tree, "ava", parse, "test/ms.test.js", 3)
