"""A target whose body requires one of the repository's npm dependencies: gen installs it, the
tests' calls are recorded and the task mints, and grading sees the same folder (the reference
earns 1.0); without it in the jail the same file does not load (the positive control). Both as
CommonJS (`require`, found on `NODE_PATH`) and as an ES module (`import`, which never reads
`NODE_PATH`: found at the jail's `/node_modules`; its control takes that mount away)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from replicate.batch import Batch
from replicate.grading import javascript as graded
from replicate.jail import get_sandbox, node_deps

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is missing")

SOURCE = """'use strict';
const scale = require('scale-helper');

function triple(x) {
  return scale.times(x, 3);
}

module.exports = { triple };
"""
TESTS = """'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { triple } = require('..');

test('triple', () => {
  for (const [x, y] of [[1, 3], [2, 6], [-4, -12], [0, 0], [10, 30]]) {
    assert.strictEqual(triple(x), y);
  }
});
"""
ESM_SOURCE = """import { times } from 'scale-helper';

export function triple(x) {
  return times(x, 3);
}
"""
ESM_TESTS = (
    TESTS.replace("'use strict';\n", "")
    .replace("const test = require('node:test');", "import test from 'node:test';")
    .replace("const assert = require('node:assert');", "import assert from 'node:assert';")
    .replace("const { triple } = require('..');", "import { triple } from '../index.js';")
)


def _repo(tmp_path: Path, kind: str) -> Path:
    helper = tmp_path / "scale-helper"
    helper.mkdir()
    manifest = {"name": "scale-helper", "version": "1.0.0", "main": "index.js"}
    (helper / "package.json").write_text(json.dumps(manifest))
    (helper / "index.js").write_text("exports.times = (a, b) => a * b;\n")
    tree = tmp_path / "tripler"
    (tree / "test").mkdir(parents=True)
    deps = {"scale-helper": f"file:{helper}"}
    own = {"name": "tripler", "version": "1.0.0", "main": "index.js", "dependencies": deps}
    (tree / "package.json").write_text(json.dumps({**own, "type": kind}))
    esm = kind == "module"
    (tree / "index.js").write_text(ESM_SOURCE if esm else SOURCE)
    (tree / "test" / "index.test.js").write_text(ESM_TESTS if esm else TESTS)
    return tree


@pytest.mark.parametrize("kind", ["commonjs", "module"])
def test_grading_sees_the_dependencies_gen_installed(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "batch"
    argv = [sys.executable, "-m", "replicate", "gen", "--repo", str(_repo(tmp_path, kind))]
    done = subprocess.run(
        [*argv, "--out", str(out), "--json", "--no-strength"],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "scale-helper@1.0.0" in " ".join(json.loads(done.stdout)["setup_notes"])
    batch = Batch.open(out)
    task = batch.load(batch.resolve("index.triple"))
    local = get_sandbox("local")
    reference = graded.grade_script(task, task.original_source().decode(), local)
    assert not isinstance(reference, str) and reference.reward == 1.0, reference
    # positive control: the same reference in a jail that does not show the dependencies (for
    # an ES module, not at `/node_modules`: on `NODE_PATH` alone)
    if kind == "module":
        mounts = node_deps.mounts
        monkeypatch.setattr(node_deps, "mounts", lambda deps, at_root: mounts(deps, False))
    else:
        monkeypatch.setattr(node_deps, "installed", lambda tree: None)
        monkeypatch.setattr(node_deps, "install", lambda tree: "refused")
    unseen = graded.grade_script(task, task.original_source().decode(), local)
    missing = "Cannot find package" if kind == "module" else "Cannot find module"
    assert isinstance(unseen, str) and f"{missing} 'scale-helper'" in unseen, unseen
