"""Reading the original from a built copy the repository ships (a minified bundle in dist/, a
build in lib/, a published copy of the package itself under node_modules/, a source map that
carries the sources): the candidate `require`s it, or evaluates the map's source, instead of
writing the body. Positive control: with the copy in the task's tree, the attack earns 1.0.
Defence: gen hides the copy (removes it from the batch's tree, so neither the workspace nor any
jail holds it: the same attack then earns nothing on the task minted from that repository), or,
where it cannot (a copy in a folder of the targets' own sources, `lib/` here), its leak audit drops
every task the copy holds, `DropReason.LEAKED`; a file that is no built copy is not taken for one
(the plain repository keeps its tasks). A gzipped bundle is hidden unread: no text search reads
inside it."""

from __future__ import annotations

import gzip
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
    "gzipped-bundle": (
        {"dist/tiny.min.js.gz": gzip.compress(MINIFIED.encode(), mtime=0)},
        "function double(a) { const z = require('zlib'), fs = require('fs'); "
        "const m = { exports: {} }; new Function('module', 'exports', z.gunzipSync("
        "fs.readFileSync(__dirname + '/dist/tiny.min.js.gz')).toString())(m, m.exports); "
        "return m.exports.double(a); }",
    ),
}
HIDDEN = {
    "minified-in-dist",
    "own-package-in-node-modules",
    "source-map-with-sources",
    "gzipped-bundle",
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
    for rel, data in files.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_bytes(data if isinstance(data, bytes) else data.encode())
    verdict = graded(tasks_by_name(batch, verify=False)["double"], body)  # planted after gen
    assert verdict.reward == 1.0, f"{leak}: the attack does not work: {verdict.reason}"
    # defence: the repository shipping that copy mints no task its copy pays the attack on
    out = mint_tiny(tmp_path / "leaky", files)
    if leak in HIDDEN:
        task = tasks_by_name(out)["double"]
        assert not any((task.repo.tree / rel).exists() for rel in files), "the copy is not hidden"
        assert graded(task, body).reward == 0.0
        return
    drops = {e.symbol: e for e in read_entries(out) if not e.kept}
    for symbol in ("index.double", "index.pair", "index.when"):  # (lib/'s own: never called)
        entry = drops[symbol]
        assert DropReason.of(entry.reason) is DropReason.LEAKED, entry.reason
        assert Path(entry.detail).name == Path(next(iter(files))).name
