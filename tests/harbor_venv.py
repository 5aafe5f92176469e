"""Where Harbor's Python is: its own venv (Harbor needs Python >= 3.12), made by
scripts/install.sh --dev; REPLICATE_HARBOR_VENV moves it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def harbor_python() -> Path | None:
    """The venv's interpreter, or None when there is no venv."""
    venv = os.environ.get("REPLICATE_HARBOR_VENV", "").strip()
    root = Path(venv) if venv else Path.home() / ".cache" / "replicate-harbor-venv"
    python = root / "bin" / "python"
    return python if python.is_file() else None


def compose_missing() -> str | None:
    """Why `docker compose` (v2, which Harbor drives and its linter reads compose files with)
    cannot run here, or None when it can."""
    try:
        done = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"no docker CLI: {exc}"
    if done.returncode != 0:
        return "no `docker compose` (v2): run scripts/docker-setup.sh"
    return None
