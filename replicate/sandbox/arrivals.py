"""When the results channel's bytes reached the host: the trusted side's own clock on each call.

A candidate runs in the same process as the in-jail runner, so it can switch off the runner's
per-call timer (ignore SIGALRM, rebind the runner's timer functions, ...).  The host does not
share that process: the backends note, for every chunk read from the channel, how many bytes had
arrived and when (`time.monotonic()` on the host), kept as `SandboxResult.channel_arrivals`;
`replicate.jail.calltime` turns them into a per-call limit that holds on the trusted side.
"""

from __future__ import annotations

import time

from replicate.sandbox.base import Arrival


class ArrivalLog:
    """Notes the running total of bytes read from one stream and the time of each read."""

    def __init__(self) -> None:
        self.total = 0
        self.notes: list[Arrival] = []

    def note(self, size: int, at: float | None = None) -> None:
        """`size` more bytes arrived, at `at` (host monotonic time; now by default)."""
        if size > 0:
            self.total += size
            self.notes.append((self.total, time.monotonic() if at is None else at))

    def freeze(self) -> tuple[Arrival, ...]:
        return tuple(self.notes)
