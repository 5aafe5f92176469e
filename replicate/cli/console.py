"""Rich consoles: human output on stderr, machine output (--json) on stdout."""

from __future__ import annotations

import functools

from rich.console import Console


@functools.cache
def err_console() -> Console:
    return Console(stderr=True, highlight=False)


@functools.cache
def out_console() -> Console:
    return Console(highlight=False)
