"""The per-call time limit, held on the trusted side (docs/design.md §4: timeouts count as
mismatches).

Inside the jail the runner arms SIGALRM around each call, but the candidate shares that process:
it can ignore the signal, rebind the runner's timer functions or patch its clock, then return a
right answer long after the limit.  The host's clock is out of its reach.  The runner writes a
``call`` frame just before each call and a ``result`` frame just after; the backends note when
each part of the channel reached the host (`replicate.sandbox.arrivals`).  Before the
channel is parsed, every ``result`` frame that reached the host too late is replaced by a
``timeout`` outcome for the same input:

- more than ``call_timeout_s + SLACK_S`` after the first ``call`` frame of its input, or
- more than ``call_timeout_s + load allowance + SLACK_S`` after the first ``result`` frame of
  the input before it (the first input: after the first ``loaded`` frame, which the runner
  writes once every input is unpickled, or the first ``ready`` frame when there is none), so a
  candidate that keeps the runner from announcing its calls still gets no more than that.

Frames a candidate forges can only make these references earlier (the first frame of each kind
counts), never later.  Backends that note no arrivals (`plain`) are left to the runner's timer.
The runner's own ``call`` frames are consumed here: the parsed run never sees them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from replicate.jail import wire
from replicate.jail.frames import read_frame
from replicate.sandbox import Arrival

SLACK_S = 0.5  # pipe, scheduling and read latency on a busy host
LOAD_ALLOWANCE_S = 30.0  # what the runner allows for unpickling one input (twice at gen time)


@dataclass(frozen=True)
class CallClock:
    """The limits of one run: inputs in the order the runner calls them."""

    order: tuple[int, ...]
    call_timeout_s: float
    load_allowance_s: float = 2 * LOAD_ALLOWANCE_S


_CALL_HEAD = wire.CALL_HEAD.encode("ascii")
_CALL = re.escape(_CALL_HEAD) + rb"(-?\d{1,18})\}"
_CALL_AFTER_PREFIX = re.compile(_CALL)  # one pattern for every run: a run's nonce is new


def without_call_frames(channel: bytes, nonce: str) -> bytes:
    """`channel` without the runner's ``call`` frames (as the runner writes them)."""
    pattern = re.escape(nonce.encode("ascii")) + b" " + _CALL + b"\n?"
    return re.sub(b"(?m)^" + pattern, b"", channel)


def timed_frames(
    channel: bytes, arrivals: Sequence[Arrival], nonce: str, clock: CallClock
) -> list[wire.Frame | None]:
    """The frames of `channel`, one per line (None for a line that is not ours): each late
    ``result`` frame replaced by a ``timeout`` outcome, the ``call`` frames dropped.  Without
    arrival notes nothing is late."""
    if not arrivals:
        prefix = nonce.encode("ascii") + b" "
        held = without_call_frames(channel, nonce)
        return [read_frame(line, prefix) for line in held.split(b"\n") if line]
    return _replayed(channel, arrivals, nonce, clock).finish()


def _replayed(
    channel: bytes,
    arrivals: Sequence[Arrival],
    nonce: str,
    clock: CallClock,
) -> LiveFrames:
    """`channel` fed as it arrived: cut at each note's running total, with the note's time (a
    line's time is that of the note that brought its newline; the last note's at worst)."""
    live = LiveFrames(nonce, clock)
    start = 0
    for total, at in arrivals:
        live.feed(channel[start:total], at)
        start = max(start, total)
    if start < len(channel):
        live.feed(channel[start:], arrivals[-1][1])
    return live


class HeldClock:
    """The per-call limit applied line by line, in channel order (see the module docstring)."""

    def __init__(self, nonce: str, clock: CallClock) -> None:
        self.prefix = nonce.encode("ascii") + b" "
        self.call_head = self.prefix + _CALL_HEAD  # half the channel: by pattern, not as JSON
        self.clock = clock
        self.previous = {index: clock.order[n - 1] for n, index in enumerate(clock.order) if n}
        self.seen_call: dict[int, float] = {}
        self.seen_result: dict[int, float] = {}
        self.ready: float | None = None
        self.loaded: float | None = None

    def frames(self, line: bytes, at: float) -> list[wire.Frame | None]:
        """The line's frame (a late result replaced; None when the line is not ours), or no
        frame for a call frame."""
        head = line.startswith(self.call_head)
        matched = _CALL_AFTER_PREFIX.fullmatch(line, len(self.prefix)) if head else None
        if matched is not None:
            self.seen_call.setdefault(int(matched.group(1)), at)
            return []
        frame = read_frame(line, self.prefix)
        event = frame.get("event") if frame else None
        index = frame.get("i") if frame else None
        if event == wire.READY and self.ready is None:
            self.ready = at
        elif event == wire.LOADED and self.loaded is None:
            self.loaded = at
        elif event == wire.CALL and type(index) is int:
            self.seen_call.setdefault(index, at)
            return []
        elif event == wire.RESULT and type(index) is int and self._late(index, at):
            frame = _timeout_frame(index, at - (self.seen_call.get(index) or at))
        return [frame]

    def _late(self, index: int, at: float) -> bool:
        clock = self.clock
        late = _late(at, self.seen_call.get(index), clock.call_timeout_s)
        first = self.loaded if self.loaded is not None else self.ready
        before = self.seen_result.get(self.previous[index]) if index in self.previous else first
        late = late or _late(at, before, clock.call_timeout_s + clock.load_allowance_s)
        self.seen_result.setdefault(index, at)
        return late


class LiveFrames:
    """`timed_frames`, computed while the channel arrives (fed each chunk with its arrival time,
    as the backends note it), so a grade's parsing overlaps the run instead of following it."""

    def __init__(self, nonce: str, clock: CallClock) -> None:
        self.nonce, self.clock = nonce, clock
        self.held = HeldClock(nonce, clock)
        self.frames: list[wire.Frame | None] = []
        self.partial = b""
        self.size = 0
        self.at = 0.0

    def feed(self, chunk: bytes, at: float) -> list[wire.Frame | None]:
        """The frames this chunk completed."""
        self.size += len(chunk)
        self.at = at
        *lines, self.partial = (self.partial + chunk).split(b"\n")
        return self._add(lines, at)

    def result(self, channel: bytes, arrivals: Sequence[Arrival]) -> list[wire.Frame | None]:
        """The frames of the whole run: what was fed, when it is exactly the channel as kept
        (with the same arrival notes), else the channel parsed afresh."""
        if self.size != len(channel) or not arrivals or self.at != arrivals[-1][1]:
            return timed_frames(channel, arrivals, self.nonce, self.clock)
        return self.finish()

    def finish(self) -> list[wire.Frame | None]:
        """The frames of everything fed (a last, unended line included)."""
        if self.partial:
            self._add([self.partial], self.at)
            self.partial = b""
        return self.frames

    def _add(self, lines: list[bytes], at: float) -> list[wire.Frame | None]:
        start = len(self.frames)
        for line in lines:
            if line:
                self.frames.extend(self.held.frames(line, at))
        return self.frames[start:]


def _late(at: float, since: float | None, limit_s: float) -> bool:
    return since is not None and at - since > limit_s + SLACK_S


def _timeout_frame(index: int, seconds: float) -> wire.Frame:
    outcome: wire.Outcome = {"status": wire.TIMEOUT, "t": round(seconds, 6), "host_clock": True}
    return {"event": wire.RESULT, "i": index, "outcome": outcome}
