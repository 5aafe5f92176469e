"""The short string literals a library's own source files spell (`Language.literals`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path


def literals_of(paths: Iterable[Path], pattern: re.Pattern[str]) -> frozenset[str]:
    """Group 2 of every match of `pattern` in the files at `paths` (unreadable ones left out)."""
    found: set[str] = set()
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found.update(match.group(2) for match in pattern.finditer(text))
    return frozenset(found)
