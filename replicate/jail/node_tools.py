"""The npm packages replicate's own Node code uses in the jail, pinned: fast-check (widening,
`node_widening`) and sucrase (the TypeScript loader, `typescript`). Each is installed once on the
host into the cache with `npm install --ignore-scripts` (no lifecycle script runs; both are pure
JavaScript), then only ever loaded inside a jail, its `node_modules` mounted read-only and its
path handed to the runner's file that loads it. The runner itself stays Node built-ins only.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from replicate.cache import cache_root, file_lock, staging_beside
from replicate.errors import ReplicateError
from replicate.npm_command import run_npm

INSTALL_TIMEOUT_S = 600


@dataclass(frozen=True)
class NodeTool:
    """One pinned npm package: `package@version`."""

    package: str
    version: str

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}"


FAST_CHECK = NodeTool("fast-check", "3.23.2")
SUCRASE = NodeTool("sucrase", "3.35.0")


def tool_modules(tool: NodeTool) -> Path:
    """The `node_modules` folder holding `tool` and its dependencies, installed on first use
    (under a lock, built beside and renamed into place), then reused."""
    dest = cache_root() / "node-tools" / tool.spec.replace("/", "+")
    with file_lock(dest.with_name(dest.name + ".lock")):
        if not (dest / "node_modules" / tool.package / "package.json").is_file():
            staging = staging_beside(dest)
            try:
                _install(tool, staging)
                shutil.rmtree(dest, ignore_errors=True)
                staging.rename(dest)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    return dest / "node_modules"


def tool_path(tool: NodeTool) -> Path:
    """The installed package's own folder (what the jail's script `require`s)."""
    return tool_modules(tool) / tool.package


def _install(tool: NodeTool, staging: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise ReplicateError("npm is missing: scripts/install.sh installs Debian's npm")
    (staging / "package.json").write_text(
        json.dumps({"name": "replicate-node-tool", "version": "0.0.0", "private": True})
    )
    argv = [npm, "install", "--ignore-scripts", "--no-audit", "--no-fund", "--silent"]
    try:
        done = run_npm([*argv, "--save-exact", tool.spec], staging, INSTALL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ReplicateError(f"npm install {tool.spec} took over {INSTALL_TIMEOUT_S}s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
        raise ReplicateError(f"npm install {tool.spec} failed: {last}")
    for path in [staging, *staging.rglob("*")]:  # a jail may run under another uid
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o444 | (0o111 if path.is_dir() else 0))
