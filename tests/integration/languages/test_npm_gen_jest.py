"""`replicate gen` on a jest repository: ms 2.1.3 with its package.json's test runner made jest
29 and one jest test file (describe/it/test, `it.each`, a `done` callback, hooks, `jest.fn`,
jest's matchers). jest runs a file in its own module registry, which the recorder cannot reach,
so gen runs the file as a Node script with jest's globals on node:test and jest's own `expect`
and jest-mock preloaded (`runner_js/jest_globals.cjs`) and mints from its calls; the note says
so. Positive control: without the globals the same file fails under node and nothing is
recorded from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replicate.agents.llm_tools import Toolbox
from replicate.agents.protocol import AgentConfig
from replicate.agents.workspace import make_workspace
from replicate.batch import Batch
from replicate.cache import cache_root
from replicate.jail import context_for
from replicate.sandbox import get_sandbox
from tests.integration.languages.preloaded import assert_mints, assert_records_only_with_it
from tests.integration.languages.test_npm_harvest import (
    PARSE,
    mint_for_notes,
    with_runner,
    with_tests,
)

JEST_TESTS = """const ms = require('..');

let calls = 0;
beforeEach(() => { calls += 1; });

describe('ms', () => {
  it('parses', () => {
    expect(ms('1m')).toBe(60000);
    expect(ms('1.5h')).toBe(5400000);
    expect(ms('-3 weeks')).toBe(-1814400000);
    expect(ms('☃')).toBeUndefined();
  });
  it.each([['1h', 3600000], ['2d', 172800000], ['100', 100], ['1s', 1000]])(
    'ms(%s) is %d', (text, value) => { expect(ms(text)).toEqual(value); });
  test('formats', () => {
    expect(ms(60000, { long: true })).toBe('1 minute');
    expect(ms(500)).toMatch(/ms$/);
  });
  test('throws', () => {
    expect(() => ms('')).toThrow(/non-empty/);
  });
  test('a done callback', (done) => {
    setTimeout(() => { expect(ms('2 days')).toBe(172800000); done(); }, 1);
  });
  test('a mock', () => {
    const parse = jest.fn((text) => ms(text));
    parse('10s');
    expect(parse).toHaveBeenCalledWith('10s');
    expect(parse.mock.results[0].value).toBe(10000);
    expect(calls).toBeGreaterThan(0);
  });
});
"""


@pytest.fixture(scope="module")
def jest_repo(npm_repos: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    tree = with_tests(npm_repos, "ms", tmp_path_factory.mktemp("jest"), {"ms.test.js": JEST_TESTS})
    with_runner(tree, "jest", {"jest": "29.7.0"})
    return tree


def test_a_jest_suite_mints_with_jests_globals(jest_repo: Path, tmp_path: Path) -> None:
    assert_mints(jest_repo, tmp_path / "batch", "jest", "jest@29.7.0", "index.parse")


def test_without_the_globals_the_file_records_nothing(jest_repo: Path) -> None:
    assert_records_only_with_it(jest_repo, "jest", PARSE, "test/ms.test.js", 8)


def test_the_tool_agents_run_tests_runs_a_jest_file_with_the_globals(
    jest_repo: Path, tmp_path: Path
) -> None:
    """`builtin:openai`'s `run_tests` runs a jest file as gen does (jest's globals preloaded): on
    the stubbed workspace the file fails on "not implemented", once the body is written it
    passes; `run_node` on the same file, without the preload, knows no `beforeEach` (the
    control)."""
    mint_for_notes(jest_repo, tmp_path / "batch")
    batch = Batch.open(tmp_path / "batch")
    task = batch.load(batch.ids[0])
    workspace = make_workspace(task, tmp_path / "ws")
    config = AgentConfig("builtin:openai", get_sandbox("local"))
    box = Toolbox(task, workspace, context_for(task.repo, cache_root()), config)

    def call(name: str, **args: str) -> str:
        return box.call(name, json.dumps(args), 120)

    plain = call("run_node", code="", file="test/ms.test.js")
    assert "ReferenceError: beforeEach is not defined" in plain, plain
    stub = call("run_tests", files="test/ms.test.js")
    assert stub.startswith("0 of 1 test files passed\n"), stub
    assert "not implemented" in stub, stub
    call("write_file", path=task.hidden.target.path, content=task.original_source().decode())
    right = call("run_tests", files="test/ms.test.js")
    assert right.startswith("1 of 1 test files passed\n"), right
