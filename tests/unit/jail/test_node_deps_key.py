"""A repository's npm dependencies, read without installing: whether it declares any, the cache
key (its package.json and lockfile), what npm is handed, and how a Node run then sees them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replicate.jail import node_deps
from replicate.jail.node import NodeSettings, node_request
from replicate.jail.node_tests import runner_command
from replicate.sandbox import Mount


def _tree(root: Path, manifest: dict[str, object]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "package.json").write_text(json.dumps(manifest))
    return root


def test_only_declared_dependencies_are_installed(tmp_path: Path) -> None:
    assert not node_deps.declares(_tree(tmp_path / "a", {"name": "a"}))
    assert not node_deps.declares(_tree(tmp_path / "b", {"name": "b", "devDependencies": {}}))
    assert node_deps.declares(_tree(tmp_path / "c", {"devDependencies": {"tape": "^5"}}))
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "package.json").write_text("not json")
    assert not node_deps.declares(tmp_path / "d")


def test_the_key_is_the_manifest_and_its_lockfile(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "t", {"name": "t", "dependencies": {"x": "1.0.0"}})
    first = node_deps.deps_key(tree)
    assert (
        node_deps.deps_key(_tree(tmp_path / "u", json.loads((tree / "package.json").read_text())))
        == first
    )
    (tree / "package-lock.json").write_text("{}")
    locked = node_deps.deps_key(tree)
    assert locked != first
    _tree(tree, {"name": "t", "dependencies": {"x": "1.0.1"}})
    assert node_deps.deps_key(tree) not in (first, locked)


def test_npm_is_handed_absolute_file_specs_and_no_scripts(tmp_path: Path) -> None:
    tree = _tree(
        tmp_path / "t",
        {
            "name": "t",
            "scripts": {"postinstall": "touch /tmp/x"},
            "dependencies": {"a": "file:./vendor/a", "b": "^1.0.0", "c": "file:/abs/c"},
        },
    )
    staged = node_deps._staged_manifest(tree)
    assert "scripts" not in staged
    assert staged["dependencies"] == {
        "a": f"file:{(tree / 'vendor' / 'a').resolve()}",
        "b": "^1.0.0",
        "c": "file:/abs/c",
    }
    assert "--ignore-scripts" in node_deps.FLAGS


def test_a_node_run_sees_the_installed_folder_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    tree = _tree(tmp_path / "t", {"name": "t", "devDependencies": {"mocha": "10.0.0"}})
    bare = node_request(tree, b"{}", NodeSettings(), node=Path("/usr/bin/node"))
    assert "NODE_PATH" not in bare.env  # declared, not installed: nothing shown
    assert runner_command(tree, "mocha").script == ()
    folder = tmp_path / "cache" / "node-deps" / node_deps.deps_key(tree)
    (folder / "node_modules" / "mocha" / "bin").mkdir(parents=True)
    (folder / "node_modules" / "mocha" / "bin" / "mocha.js").write_text("")
    (folder / node_deps.SHOWN).write_text(json.dumps({"packages": ["mocha@10.0.0"], "removed": []}))
    shown = node_request(tree, b"{}", NodeSettings(), node=Path("/usr/bin/node"))
    modules = folder / "node_modules"
    assert shown.env["NODE_PATH"] == str(modules)
    assert Mount.same(str(modules)) in shown.mounts  # read-only: not writable
    assert runner_command(tree, "mocha").script == (str(modules / "mocha" / "bin" / "mocha.js"),)
    (tree / "a.js").write_text("describe('a', () => {});\n")
    (tree / "b.js").write_text("const test = require('node:test');\n")
    assert runner_command(tree, "mocha", ["a.js", "b.js"]).plain == {"b.js"}
    assert runner_command(tree, "tape").script == ()


def test_the_packages_the_tests_name(tmp_path: Path) -> None:
    """What a fallback install keeps of the development dependencies: what the scripts require
    or import by name, and the words of the `test` script and the scripts it runs."""
    scripts = {
        "test": "npm run tests-only",
        "tests-only": "nyc tape 'test/**/*.js'",
        "lint": "eslint .",
    }
    tree = _tree(tmp_path / "t", {"name": "t", "scripts": scripts})
    (tree / "test").mkdir()
    (tree / "test" / "a.js").write_text(
        "var t = require('tape');\nvar u = require('../lib/utils');\n"
        "import x from '@scope/pkg/sub';\nconst y = await import(\"mock-property\");\n"
    )
    (tree / "node_modules" / "z").mkdir(parents=True)
    (tree / "node_modules" / "z" / "i.js").write_text("require('hidden');\n")
    named = node_deps.named_packages(tree)
    assert {"tape", "@scope/pkg", "mock-property", "nyc"} <= named
    assert not {"hidden", "eslint", "../lib/utils"} & named
