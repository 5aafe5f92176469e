"""When the results channel's bytes reached the host: the trusted side's own clock on each call.

A candidate runs in the same process as the in-jail runner, so it can switch off the runner's
per-call timer (ignore SIGALRM, rebind the runner's timer functions, ...).  The host does not
share that process: the backends note, for every chunk read from the channel, how many bytes had
arrived and when (`time.monotonic()` on the host).  `TimedResult` carries those notes next to
the fields of `SandboxResult` (the frozen contract stays as it is), and
`replicate.harness.calltime` turns them into a per-call limit that holds on the trusted side.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from replicate.harness.sandbox.base import SandboxResult

Arrival = tuple[int, float]  # (bytes of the channel received so far, host monotonic time)


@dataclass(frozen=True)
class TimedResult(SandboxResult):
    """A sandbox result that also says when each part of the channel arrived."""

    channel_arrivals: tuple[Arrival, ...] = ()


def arrivals_of(result: SandboxResult) -> tuple[Arrival, ...]:
    """The channel's arrival notes, or () for a backend that keeps none."""
    if isinstance(result, TimedResult):
        return result.channel_arrivals
    return ()


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
