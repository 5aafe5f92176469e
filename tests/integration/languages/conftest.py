"""Real npm packages, pinned: each tarball fetched once with `npm pack` into the project's cache
(beside the PyPI sdists), unpacked and committed as a git repository, shared by the session; and
test runners (development dependencies) installed once with `npm install --ignore-scripts` there
(nothing of them runs on the host)."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from replicate.cache import cache_root, file_lock, staging_beside
from tests.integration.minted import git

PACK_TIMEOUT_S = 300


def npm_repo(name: str, version: str) -> Path:
    """The git repository of the npm tarball of `name@version` (made once, then reused)."""
    dest = cache_root() / "npm" / f"{name.replace('/', '+')}-{version}"
    with file_lock(dest.with_name(dest.name + ".lock")):
        if not dest.is_dir():
            staging = staging_beside(dest)
            try:
                _pack(name, version, staging)
                shutil.rmtree(staging / "tarball")
                staging.rename(dest)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    return dest / "package"


def _pack(name: str, version: str, staging: Path) -> None:
    (staging / "tarball").mkdir(parents=True)
    npm(staging, "pack", f"{name}@{version}", "--silent", "--pack-destination", "tarball")
    (archive,) = (staging / "tarball").glob("*.tgz")
    with tarfile.open(archive) as tar:
        tar.extractall(staging, filter="data")
    package = staging / "package"
    git(package, "init", "-q")
    git(package, "add", "-A")
    git(package, "commit", "-q", "-m", f"{name} {version}")


# The packages: ms (CommonJS functions), camelcase (ESM), semver (CommonJS with classes). None
# of the allowed packages ships a TypeScript source: that is corpus/tslib (`TSLIB`), our own.
PACKAGES = {"ms": "2.1.3", "camelcase": "8.0.0", "semver": "7.6.3"}
TSLIB = Path(__file__).resolve().parents[3] / "corpus" / "tslib"


@pytest.fixture(scope="session")
def npm_repos() -> dict[str, Path]:
    """Each of `PACKAGES` as a git repository, by name."""
    return {name: npm_repo(name, version) for name, version in PACKAGES.items()}


def npm_modules(name: str, packages: dict[str, str]) -> Path:
    """A `node_modules` folder holding `packages` (name to version), installed once without
    their install scripts, then reused."""
    pinned = "-".join(f"{p}@{v}" for p, v in sorted(packages.items()))
    dest = cache_root() / "npm-dev" / f"{name}-{pinned}"
    with file_lock(dest.with_name(dest.name + ".lock")):
        if not dest.is_dir():
            staging = staging_beside(dest)
            try:
                _install(packages, staging)
                staging.rename(dest)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    return dest / "node_modules"


def _install(packages: dict[str, str], staging: Path) -> None:
    staging.mkdir(parents=True, exist_ok=True)
    (staging / "package.json").write_text('{"name": "dev", "version": "0.0.0", "private": true}')
    pinned = [f"{p}@{v}" for p, v in packages.items()]
    npm(staging, "install", "--ignore-scripts", "--no-audit", "--no-fund", "--silent", *pinned)


def npm(cwd: Path, *args: str) -> None:
    if shutil.which("npm") is None:
        pytest.fail("npm is missing: scripts/install.sh --dev installs it")
    done = subprocess.run(
        ["npm", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=PACK_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"npm {' '.join(args)}: {done.stderr.strip()[-500:]}"


@pytest.fixture(scope="session")
def mocha_modules() -> Path:
    """mocha 10.7.3 and expect.js 0.3.1 (ms's test tools), installed once."""
    return npm_modules("mocha", {"mocha": "10.7.3", "expect.js": "0.3.1"})
