"""`replicate gen` on an uvu repository: ms 2.1.3 with its package.json's test runner made uvu
and one uvu test file. Gen installs uvu into the cache (no lifecycle script runs), runs the file
as a plain Node script (it ends with `test.run()`, what uvu's own CLI calls), and mints from its
calls; nothing is said unsupported, and no test file failed."""

from __future__ import annotations

from pathlib import Path

from tests.integration.languages.test_npm_harvest import (
    assert_minted_or_degenerate,
    mint_for_notes,
    with_runner,
    with_tests,
)

UVU_TESTS = """const { test } = require('uvu');
const assert = require('uvu/assert');
const ms = require('..');

test('parses', () => {
  assert.is(ms('1m'), 60000);
  assert.is(ms('1.5h'), 5400000);
  assert.is(ms('2 days'), 172800000);
  assert.is(ms('-3 weeks'), -1814400000);
  assert.is(ms('100'), 100);
});

test('formats', () => {
  assert.is(ms(500), '500ms');
  assert.is(ms(60000), '1m');
  assert.is(ms(500, { long: true }), '500 ms');
  assert.is(ms(90000, { long: true }), '2 minutes');
});

test.run();
"""


def test_an_uvu_suite_mints_as_plain_node_scripts(
    npm_repos: dict[str, Path], tmp_path: Path
) -> None:
    tree = with_tests(npm_repos, "ms", tmp_path, {"index.js": UVU_TESTS})
    with_runner(tree, "uvu test", {"uvu": "0.5.6"})
    notes = mint_for_notes(tree, tmp_path / "batch")
    assert "uvu@0.5.6" in notes and "with --ignore-scripts" in notes
    assert "not supported yet" not in notes and "failed under node" not in notes
    assert_minted_or_degenerate(tmp_path / "batch", "index.parse")  # ms('1m'), ms('1.5h'), ...
