"""Reading the original from a built copy the repository ships (a minified bundle in dist/, a
build in lib/, a published copy of the package itself under node_modules/, a source map that
carries the sources): the candidate `require`s it, or evaluates the map's source, instead of
writing the body. Positive control: with the copy in the task's tree, the attack earns 1.0.
Defence: gen's leak audit finds the copy and drops every task it holds, `DropReason.LEAKED`
(and a file that is no built copy is not taken for one: the plain repository keeps its tasks)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from replicate.core import DropReason
from replicate.gen.ledger import read_entries
from tests.redteam.javascript.minted import INDEX, graded, mint_tiny, tasks_by_name

pytestmark = pytest.mark.e2e

MINIFIED = (
    "'use strict';function double(n){return n*2}function pair(n){return[n,String(n)]}"
    "function when(n){return new Date(n)}"
    "exports.double=double;exports.pair=pair;exports.when=when;\n"
)
SOURCE_MAP = json.dumps({"version": 3, "sources": ["../index.js"], "sourcesContent": [INDEX]})
FROM_MAP = (
    "function double(a) { const fs = require('fs'); const map = JSON.parse(fs.readFileSync("
    "__dirname + '/dist/index.js.map', 'utf8')); const m = { exports: {} }; new Function("
    "'module', 'exports', map.sourcesContent[0])(m, m.exports); return m.exports.double(a); }"
)
# id -> (files the repository ships besides its own, the cheating body of `double`)
LEAKS = {
    "minified-in-dist": (
        {"dist/tiny.min.js": MINIFIED},
        "function double(a) { return require('./dist/tiny.min.js').double(a); }",
    ),
    "build-in-lib": (
        {"lib/index.js": INDEX},
        "function double(a) { return require('./lib/index.js').double(a); }",
    ),
    "own-package-in-node-modules": (
        {
            "node_modules/tiny-js/package.json": json.dumps({"name": "tiny-js"}),
            "node_modules/tiny-js/index.js": INDEX,
        },
        "function double(a) { return require('tiny-js').double(a); }",
    ),
    "source-map-with-sources": ({"dist/index.js.map": SOURCE_MAP}, FROM_MAP),
}


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository without built copies, minted: every task kept."""
    out = mint_tiny(tmp_path_factory.mktemp("javascript-plain"))
    assert sorted(tasks_by_name(out)) == ["double", "letters", "pair", "tally", "when"]
    return out


@pytest.mark.parametrize("leak", sorted(LEAKS))
def test_a_built_copy_of_the_original(leak: str, plain: Path, tmp_path: Path) -> None:
    files, body = LEAKS[leak]
    # positive control: the plain batch's task, the copy put into its tree, pays the attack
    batch = tmp_path / "planted"
    shutil.copytree(plain, batch)
    tree = tasks_by_name(batch)["double"].repo.tree
    for rel, text in files.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    verdict = graded(tasks_by_name(batch, verify=False)["double"], body)  # planted after gen
    assert verdict.reward == 1.0, f"{leak}: the attack does not work: {verdict.reason}"
    # defence: the repository shipping that copy mints no task whose body it holds
    out = mint_tiny(tmp_path / "leaky", files)
    drops = {e.symbol: e for e in read_entries(out) if not e.kept}
    for symbol in ("index.double", "index.pair", "index.when"):  # (lib/'s own: never called)
        entry = drops[symbol]
        assert DropReason.of(entry.reason) is DropReason.LEAKED, entry.reason
        assert Path(entry.detail).name == Path(next(iter(files))).name or leak.startswith("own")
