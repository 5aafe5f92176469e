"""Attacks on the Node runner's own objects: a candidate that makes the runner report what it did
not do. Each one returns 0 from `double` and tries to have the host read 12345 instead (a value
it never returned: with answers computed the same way, a wrong candidate would pass); the
positive control runs it on a copy of the runner with the one defence taken out (the copy
mounted in place of `runner_js/`) and the host reads 12345; with the runner as it is, the host
reads the 0 it returned.

- `Object.prototype.toJSON` set by the candidate: JSON.stringify of each frame calls it, so it
  replaces the runner's frame by its own. Defence: the frames go out with their prototypes cut
  off (`outcome.cjs` `bare`).
- the runner's modules in `require.cache`: their exports replaced by forgers. Defence: the runner
  takes what it uses from its modules when it loads, before the repository's code runs.
- the channel's nonce hunted for (a global, the job re-read from /proc/self/fd/0, the
  environment, the command line) to write result frames first on fd 3 (the host keeps the
  first result of an input). Defence: the nonce stays in the runner's closures and its stdin is
  a pipe, read once.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from replicate.batch import LoadedTask
from replicate.grading.javascript import run_script
from replicate.jail import get_sandbox, node
from replicate.values import javascript as js
from tests.redteam.javascript.minted import mint_tiny, tasks_by_name

pytestmark = pytest.mark.e2e

FORGED = "{ t: 'num', v: '12345' }"
TOJSON = (
    "function double(a) { Object.prototype.toJSON = function () { if (this.event !== 'result')"
    f" return this; return {{ ...this, outcome: {{ ...this.outcome, value: {FORGED} }} }}; }};"
    " return 0; }"
)
CACHE = (
    "function double(a) { for (const k of Object.keys(require.cache)) { if (!k.endsWith("
    "'outcome.cjs')) continue; const ex = require.cache[k].exports; const real = ex.report; "
    f"ex.report = (...xs) => ({{ ...real(...xs), value: {FORGED} }}); }} return 0; }}"
)
NONCE = (
    "function double(a) { const fs = require('fs'); const hex = /\\b[0-9a-f]{32}\\b/; "
    "const seen = []; try { seen.push(JSON.stringify(globalThis.job || '')); } catch {} "
    "for (const f of ['/proc/self/fd/0', '/proc/self/environ', '/proc/self/cmdline']) { "
    "try { seen.push(fs.readFileSync(f, 'utf8')); } catch {} } "
    "const found = seen.map((s) => hex.exec(s)).find(Boolean); if (found) { for (let i = 0; "
    "i < 200; i += 1) { fs.writeSync(3, `${found[0]} ${JSON.stringify({ event: 'result', i, "
    f"outcome: {{ status: 'returned', value: {FORGED}, args: [] }} }})}}\\n`); }} }} "
    "return 0; }"
)
# id -> (the cheating body, the runner file the control edits, the defence taken out, as put back)
ATTACKS = {
    "frames-replaced-by-tojson": (
        TOJSON,
        "outcome.cjs",
        "stringify(bare(frame))",
        "stringify(frame)",
    ),
    "runner-exports-in-require-cache": (
        CACHE,
        "main.cjs",
        "outcome = report(settled",
        "outcome = require('./outcome.cjs').report(settled",
    ),
    "channel-nonce-hunted": (
        NONCE,
        "main.cjs",
        "const write = channel(",
        "globalThis.job = job;\n  const write = channel(",
    ),
}


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> LoadedTask:
    return tasks_by_name(mint_tiny(tmp_path_factory.mktemp("javascript-runner")))["double"]


def _read(task: LoadedTask, body: str) -> set[object]:
    """The values the host reads for the candidate's calls (a set: they should all be one)."""
    spliced = task.language().splice(task.stubbed_source(), body, task.hidden.target)
    outcomes = run_script(task, get_sandbox("local"), spliced)
    return {o.value if o.status is node.Status.RETURNED else o.status for o in outcomes}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_runner_reports_what_the_candidate_did(
    attack: str, task: LoadedTask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body, part, defence, undone = ATTACKS[attack]
    weak = tmp_path / "runner_js"
    shutil.copytree(node.RUNNER_DIR, weak)
    text = (weak / part).read_text()
    assert text.count(defence) == 1, f"{attack}: the defence is not where the control expects"
    (weak / part).write_text(text.replace(defence, undone))
    with monkeypatch.context() as patched:
        patched.setattr(node, "RUNNER_DIR", weak)
        assert _read(task, body) == {js.read_number("12345")}, f"{attack}: the forgery fails"
    assert _read(task, body) == {js.read_number("0")}
