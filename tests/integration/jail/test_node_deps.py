"""A JavaScript repository's npm dependencies, installed into the cache with no lifecycle script
run, shown to its Node runs in the jail, and no copy of the package itself among them.

Local `file:` packages only: no network."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from replicate.gen import script_leaks
from replicate.jail import node_deps
from replicate.jail.node import NodeSettings, node_request
from replicate.sandbox import get_sandbox

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is missing")


def _write(path: Path, manifest: dict[str, object], code: str = "") -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "package.json").write_text(json.dumps(manifest))
    (path / "index.js").write_text(code or "module.exports = () => 42;\n")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _repo(tmp_path: Path, marker: Path) -> Path:
    """A repository whose development dependency's `postinstall` would write `marker`."""
    tree = tmp_path / "repo"
    script = f"node -e \"require('fs').writeFileSync('{marker}', 'ran')\""
    _write(
        tree / "vendor" / "scripted",
        {"name": "scripted", "version": "1.0.0", "scripts": {"postinstall": script}},
    )
    _write(
        tree,
        {
            "name": "demo",
            "version": "1.0.0",
            "devDependencies": {"scripted": "file:./vendor/scripted"},
        },
    )
    return tree


def test_no_lifecycle_script_runs_in_the_install(tmp_path: Path, cache: Path) -> None:
    marker = tmp_path / "marker"
    tree = _repo(tmp_path, marker)
    # positive control: npm's own install of the same package runs its postinstall
    plain = tmp_path / "plain"
    shutil.copytree(tree, plain)
    argv = ["npm", "install", "--install-links", "--no-audit", "--no-fund", "--silent"]
    subprocess.run(argv, cwd=plain, check=True, capture_output=True, timeout=300)
    assert marker.read_text() == "ran"
    marker.unlink()
    done = node_deps.install(tree)
    assert isinstance(done, node_deps.Installed), done
    assert done.packages == ("scripted@1.0.0",)
    assert (done.modules / "scripted" / "index.js").is_file()
    assert done.modules.is_relative_to(cache)
    assert not marker.exists()
    assert node_deps.install(tree) == done  # installed once, then read back
    assert "installed 1 npm dependencies with --ignore-scripts" in done.note()


def test_a_failing_install_is_one_line(tmp_path: Path, cache: Path) -> None:
    tree = tmp_path / "repo"
    _write(tree, {"name": "demo", "version": "1.0.0", "dependencies": {"absent": "file:./nowhere"}})
    failed = node_deps.install(tree)
    assert isinstance(failed, str) and "\n" not in failed
    assert failed.startswith("npm install of the repository's dependencies failed")
    assert node_deps.installed(tree) is None


def test_no_dependencies_no_install(tmp_path: Path, cache: Path) -> None:
    tree = tmp_path / "repo"
    _write(tree, {"name": "demo", "version": "1.0.0"})
    assert node_deps.install(tree) is None
    assert not cache.exists()


def _run(tree: Path, code: str) -> str:
    request = node_request(tree, b"", NodeSettings(timeout_s=60), script=("-e", code))
    result = get_sandbox("local").run(request)
    return result.stdout.decode() + result.stderr.decode()


def test_the_jail_sees_the_dependencies_and_no_copy_of_the_package(
    tmp_path: Path, cache: Path
) -> None:
    """A development dependency that depends on the package itself (as mocha's `debug` on `ms`):
    npm installs a copy of the original beside it, which a candidate could require. It is
    replaced by a stand-in that loads the repository's own tree, so the dependency still works."""
    tree = tmp_path / "repo"
    own = {"name": "selfpkg", "version": "1.0.0"}
    _write(tmp_path / "published", own, "module.exports = function original() { return 1; };\n")
    published = f"file:{tmp_path / 'published'}"
    helper = {"name": "helper", "version": "1.0.0", "dependencies": {"selfpkg": published}}
    _write(tmp_path / "helper", helper, "module.exports = () => require('selfpkg')();\n")
    _write(tree, {**own, "devDependencies": {"helper": f"file:{tmp_path / 'helper'}"}})
    # positive control: npm's own install holds the copy, and the jail would load it
    plain = tmp_path / "plain"
    shutil.copytree(tree, plain)
    argv = ["npm", "install", "--ignore-scripts", "--install-links", "--no-audit", "--silent"]
    subprocess.run(argv, cwd=plain, check=True, capture_output=True, timeout=300)
    assert node_deps.own_copies(plain / "node_modules", "selfpkg")
    done = node_deps.install(tree)
    assert isinstance(done, node_deps.Installed), done
    assert done.removed and not node_deps.own_copies(done.modules, "selfpkg")
    assert "function original" not in (done.modules / "selfpkg" / "index.js").read_text()
    assert script_leaks.installed_copy(tree) is None
    # the tree's own index.js answers 42, the published copy 1
    seen = _run(tree, "console.log(require('helper')(), require('selfpkg')())")
    assert seen.split() == ["42", "42"], seen
    # a folder that holds a copy (installed some other way) is found by the audit
    shutil.rmtree(done.modules / "selfpkg")
    shutil.copytree(plain / "node_modules" / "selfpkg", done.modules / "selfpkg")
    script_leaks.installed_copy.cache_clear()
    assert script_leaks.installed_copy(tree) == done.modules / "selfpkg"
    assert script_leaks.built_copy(tree, "index.js", "original") == done.modules / "selfpkg"
    assert _run(tree, "console.log(require('selfpkg')())").split() == ["1"]
