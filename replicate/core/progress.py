"""The progress interface long-running stages report to (the CLI shows it with rich on a terminal,
as plain lines elsewhere)."""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def stage(self, description: str, total: int | None = None) -> None: ...

    def advance(self, n: int = 1) -> None: ...

    def tasks(self, n: int) -> None:
        """How many tasks exist so far."""


class NullProgress:
    def stage(self, description: str, total: int | None = None) -> None:
        return None

    def advance(self, n: int = 1) -> None:
        return None

    def tasks(self, n: int) -> None:
        return None
