"""`replicate gen` on a mocha repository: ms 2.1.3 (its package.json's test runner is mocha 4)
with one mocha test file. Gen installs its development dependencies into the cache (no
lifecycle script runs: husky's would install git hooks), runs the file through mocha's own
entry in the recorder's process, and mints from its calls; nothing is said unsupported."""

from __future__ import annotations

from pathlib import Path

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
