"""npm run on the host, one way everywhere: its update notifier off, its output captured, and
its error lines cleaned for a one-line message (`npm pack` of a source, the install of a
repository's dependencies and of replicate's own Node tools)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def run_npm(
    argv: list[str], cwd: Path, timeout_s: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """npm's `argv` run in `cwd` with its update notifier off (and `env` added), its output
    captured; `subprocess.TimeoutExpired` past `timeout_s`."""
    full = {**os.environ, "npm_config_update_notifier": "false", **(env or {})}
    return subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=timeout_s, check=False, env=full
    )


def npm_messages(stderr: str) -> list[str]:
    """npm's error lines, less their `npm error` mark, the error code and the log's place."""
    lines = [ln.removeprefix("npm error").strip() for ln in stderr.splitlines()]
    return [ln for ln in lines if ln and not ln.startswith(("code ", "A complete log"))]
