"""`replicate gen` on a mocha repository: ms 2.1.3 (its package.json's test runner is mocha 4)
with one mocha test file. Gen installs its development dependencies into the cache (no
lifecycle script runs: husky's would install git hooks), runs the file through mocha's own
entry in the recorder's process, and mints from its calls; nothing is said unsupported. The
built-in agent's `run_tests` on a minted task's workspace runs the file the same way: mocha's
`describe` is there, where the same file run by `run_node` as a plain script finds none."""

from __future__ import annotations

import json
from pathlib import Path

from replicate.agents.llm_tools import Toolbox
from replicate.agents.protocol import AgentConfig
from replicate.agents.workspace import make_workspace
from replicate.batch import Batch, LoadedTask
from replicate.cache import cache_root
from replicate.jail import context_for
from replicate.sandbox import get_sandbox
from tests.integration.languages.test_npm_harvest import (
    assert_minted_or_degenerate,
    mint_for_notes,
    with_tests,
)

MOCHA_TESTS = """const expect = require('expect.js');
const ms = require('..');

describe('ms', function () {
  it('parses', function () {
    expect(ms('1m')).to.be(60000);
    expect(ms('1.5h')).to.be(5400000);
    expect(ms('2 days')).to.be(172800000);
    expect(ms('-3 weeks')).to.be(-1814400000);
    expect(ms('100')).to.be(100);
  });
  it('formats', function () {
    expect(ms(500)).to.be('500ms');
    expect(ms(60000)).to.be('1m');
    expect(ms(-3 * 60 * 60 * 1000)).to.be('-3h');
    expect(ms(500, { long: true })).to.be('500 ms');
    expect(ms(90000, { long: true })).to.be('2 minutes');
    expect(ms(86400000, { long: true })).to.be('1 day');
  });
});
"""


def test_a_mocha_suite_mints_through_mochas_entry(
    npm_repos: dict[str, Path], tmp_path: Path
) -> None:
    tree = with_tests(npm_repos, "ms", tmp_path, {"index.js": MOCHA_TESTS})
    notes = mint_for_notes(tree, tmp_path / "batch")
    assert "mocha@4.0.1" in notes and "with --ignore-scripts" in notes
    # mocha's `debug` depends on ms: npm's copies of it replaced, and mocha still loads
    assert "2 copies of the package itself among them replaced by its tree" in notes
    assert "not supported yet" not in notes and "failed under node" not in notes
    assert_minted_or_degenerate(tmp_path / "batch", "index.parse")  # ms('1m'), ms('1.5h'), ...
    batch = Batch.open(tmp_path / "batch")  # ms's formatters, at least, are tasks
    agent_runs_the_suite_through_mocha(batch.load(batch.ids[0]), tmp_path)


def agent_runs_the_suite_through_mocha(task: LoadedTask, tmp_path: Path) -> None:
    workspace = make_workspace(task, tmp_path / "ws")
    config = AgentConfig("builtin:openai", get_sandbox("local"))
    box = Toolbox(task, workspace, context_for(task.repo, cache_root()), config)

    def call(name: str, **args: str) -> str:
        return box.call(name, json.dumps(args), 120)

    plain = call("run_node", code="", file="test/index.js")  # the control: no mocha around it
    assert "ReferenceError: describe is not defined" in plain, plain
    stub = call("run_tests", files="")
    print(stub)
    assert stub.startswith("0 of 1 test files passed\n=== test/index.js: exit code 1\n"), stub
    assert "1 failing" in stub and "Error: not implemented" in stub  # `parses`
    call("write_file", path=task.hidden.target.path, content=task.original_source().decode())
    right = call("run_tests", files="test/index.js")
    assert right.startswith("1 of 1 test files passed\n") and "2 passing" in right, right
