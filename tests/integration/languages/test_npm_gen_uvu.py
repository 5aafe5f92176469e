"""`replicate gen` on an uvu repository: ms 2.1.3 with its package.json's test runner made uvu
and one uvu test file. Gen installs uvu into the cache (no lifecycle script runs), runs the file
as a plain Node script (it ends with `test.run()`, what uvu's own CLI calls), and mints from its
calls; nothing is said unsupported, and no test file failed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from replicate.batch import Batch
from tests.integration.languages.test_npm_harvest import with_tests

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
    manifest = json.loads((tree / "package.json").read_text())
    manifest["scripts"] = {"test": "uvu test"}
    manifest["devDependencies"] = {"uvu": "0.5.6"}
    (tree / "package.json").write_text(json.dumps(manifest))
    out = tmp_path / "batch"
    argv = [sys.executable, "-m", "replicate", "gen", "--repo", str(tree), "--out", str(out)]
    done = subprocess.run(
        [*argv, "--json", "--no-strength"],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    notes = " ".join(json.loads(done.stdout)["setup_notes"])
    print(notes)
    assert "uvu@0.5.6" in notes and "with --ignore-scripts" in notes
    assert "not supported yet" not in notes and "failed under node" not in notes
    batch = Batch.open(out)
    assert batch.resolve("index.parse") in batch.ids  # the suite's ms('1m'), ms('1.5h'), ...
