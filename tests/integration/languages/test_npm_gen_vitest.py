"""`replicate gen` on a vitest repository that is an ES module: camelcase 8.0.0 (`"type":
"module"`) with its package.json's test runner made vitest 2 and one vitest test file (its
`import ... from 'vitest'`, `it.each`, a test handed vitest's context, `vi.fn`). vitest runs a
file through vite's module graph in a worker, which the recorder cannot reach, so gen runs it as
a Node script whose `vitest` import resolves to vitest's API on node:test, made with the
`@vitest/expect` and `@vitest/spy` vitest installed (`runner_js/vitest.mjs`), and mints from its
calls; the note says so. Positive control: without that the same file fails under node (the
real `vitest` refuses to run outside its runner) and nothing is recorded from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.gen import javascript
from replicate.jail import get_sandbox, node_deps, node_harvest
from replicate.jail.node import NodeTarget
from tests.integration.languages.test_npm_harvest import mint_for_notes, with_runner, with_tests

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
CAMEL = NodeTarget("index.js", (), scope="camelCase")


@pytest.fixture(scope="module")
def vitest_repo(npm_repos: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("vitest")
    tree = with_tests(npm_repos, "camelcase", root, {"camelcase.test.js": VITEST_TESTS})
    return with_runner(tree, "vitest run", {"vitest": "2.1.9"})


def test_a_vitest_suite_mints_with_vitests_api(vitest_repo: Path, tmp_path: Path) -> None:
    notes, batch = mint_for_notes(vitest_repo, tmp_path / "batch")
    assert "vitest@2.1.9" in notes and javascript.PRELOAD_NOTES["vitest"] in notes
    assert "not supported yet" not in notes and "failed under node" not in notes
    assert batch.resolve("index.camelCase") in batch.ids


def test_without_the_api_the_file_records_nothing(vitest_repo: Path) -> None:
    """The control: the same file, vitest installed as gen installs it, with and without."""
    node_deps.install(vitest_repo)  # once a machine: the key is the package.json's content
    files = ["test/camelcase.test.js"]
    command = javascript.runner_command(vitest_repo, "vitest", files)
    assert command.script == ("--require", str(node_harvest.VITEST_GLOBALS))
    local = get_sandbox("local")
    given = node_harvest.record_tests(local, vitest_repo, [CAMEL], files, command=command)
    bare = node_harvest.record_tests(local, vitest_repo, [CAMEL], files)
    assert given.files[0].exit_code == 0 and len(given.calls) >= 8, given.files
    assert bare.files[0].exit_code != 0 and not bare.calls
