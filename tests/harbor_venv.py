"""Where Harbor's Python is: its own venv (Harbor needs Python >= 3.12), made by
scripts/install.sh --dev; REPLICATE_HARBOR_VENV moves it."""

from __future__ import annotations

import os
from pathlib import Path


def harbor_python() -> Path | None:
    """The venv's interpreter, or None when there is no venv."""
    venv = os.environ.get("REPLICATE_HARBOR_VENV", "").strip()
    root = Path(venv) if venv else Path.home() / ".cache" / "replicate-harbor-venv"
    python = root / "bin" / "python"
    return python if python.is_file() else None
