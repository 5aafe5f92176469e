"""Reading pip's error output: a one-line reason, and which requirements pip says it cannot find."""

from __future__ import annotations

import re
from collections.abc import Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

_NOT_FOUND = re.compile(
    r"(?:Could not find a version that satisfies the requirement|"
    r"No matching distribution found for)\s+(\S+)"
)
_MAX = 300


def error_line(stderr: str) -> str:
    """The first `ERROR:` line of pip's output (prefix removed), else its last line; one line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    chosen = next((line for line in lines if line.startswith("ERROR:")), None)
    if chosen is None:
        chosen = lines[-1] if lines else "pip failed without a message"
    chosen = chosen.removeprefix("ERROR:").strip()
    return chosen if len(chosen) <= _MAX else chosen[: _MAX - 3] + "..."


def _name(text: str) -> str | None:
    try:
        return canonicalize_name(Requirement(text).name)
    except InvalidRequirement:
        return None


def culprits(stderr: str, reqs: Sequence[str]) -> list[str]:
    """The members of `reqs` that pip reports as not available (by distribution name)."""
    missing = {name for m in _NOT_FOUND.finditer(stderr) if (name := _name(m.group(1)))}
    return [r for r in reqs if _name(r) in missing]
