"""The rich console of human output, on stderr (machine output, `--json`, is printed on stdout)."""

from __future__ import annotations

import functools

from rich.console import Console


@functools.cache
def err_console() -> Console:
    return Console(stderr=True, highlight=False)
