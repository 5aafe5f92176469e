"""The per-call time limit, held on the trusted side (BRIEF §4: timeouts count as mismatches).

Inside the jail the runner arms SIGALRM around each call, but the candidate shares that process:
it can ignore the signal, rebind the runner's timer functions or patch its clock, then return a
right answer long after the limit.  The host's clock is out of its reach.  The runner writes a
``call`` frame just before each call and a ``result`` frame just after; the backends note when
each part of the channel reached the host (`replicate.harness.sandbox.arrivals`).  Before the
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

import bisect
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from replicate.harness.sandbox.arrivals import Arrival
from replicate.verifiers.compare import read_frame

SLACK_S = 0.5  # pipe, scheduling and read latency on a busy host
LOAD_ALLOWANCE_S = 30.0  # what the runner allows for unpickling one input (twice at gen time)


@dataclass(frozen=True)
class CallClock:
    """The limits of one run: inputs in the order the runner calls them."""

    order: tuple[int, ...]
    call_timeout_s: float
    load_allowance_s: float = 2 * LOAD_ALLOWANCE_S


_CALL = rb'\{"event":"call","i":(-?\d{1,18})\}'


def without_call_frames(channel: bytes, nonce: str) -> bytes:
    """`channel` without the runner's ``call`` frames (as the runner writes them)."""
    pattern = re.escape(nonce.encode("ascii")) + b" " + _CALL + b"\n?"
    return re.sub(b"(?m)^" + pattern, b"", channel)


def _frame(line: bytes, prefix: bytes, call: re.Pattern[bytes]) -> dict[str, Any] | None:
    """`read_frame`, with the runner's own ``call`` frames (half the channel) read by pattern."""
    matched = call.fullmatch(line)
    if matched is not None:
        return {"event": "call", "i": int(matched.group(1))}
    return read_frame(line, prefix)


def hold_call_times(
    channel: bytes, arrivals: Sequence[Arrival], nonce: str, clock: CallClock
) -> bytes:
    """`channel` with each late ``result`` frame replaced by a ``timeout`` outcome and the
    ``call`` frames dropped."""
    if not arrivals:
        return without_call_frames(channel, nonce)
    return b"\n".join(line for line, _ in _held(channel, arrivals, nonce, clock))


def timed_frames(
    channel: bytes, arrivals: Sequence[Arrival], nonce: str, clock: CallClock
) -> list[dict[str, Any] | None]:
    """The frames of `hold_call_times`, parsed once (None for a line that is not ours)."""
    if not arrivals:
        prefix = nonce.encode("ascii") + b" "
        held = without_call_frames(channel, nonce)
        return [read_frame(line, prefix) for line in held.split(b"\n") if line]
    return [frame for line, frame in _held(channel, arrivals, nonce, clock) if line]


def _held(
    channel: bytes, arrivals: Sequence[Arrival], nonce: str, clock: CallClock
) -> Iterator[tuple[bytes, dict[str, Any] | None]]:
    prefix = nonce.encode("ascii") + b" "
    call = re.compile(re.escape(prefix) + _CALL)
    previous = {index: clock.order[n - 1] for n, index in enumerate(clock.order) if n}
    seen_call: dict[int, float] = {}
    seen_result: dict[int, float] = {}
    ready: float | None = None
    loaded: float | None = None
    for line, at in _lines(channel, arrivals):
        frame = _frame(line, prefix, call)
        event = frame.get("event") if frame else None
        index = frame.get("i") if frame else None
        if event == "ready" and ready is None:
            ready = at
        elif event == "loaded" and loaded is None:
            loaded = at
        elif event == "call" and type(index) is int:
            seen_call.setdefault(index, at)
            continue
        elif event == "result" and type(index) is int:
            late = _late(at, seen_call.get(index), clock.call_timeout_s)
            first = loaded if loaded is not None else ready
            before = seen_result.get(previous[index]) if index in previous else first
            allowance = clock.call_timeout_s + clock.load_allowance_s
            late = late or _late(at, before, allowance)
            seen_result.setdefault(index, at)
            if late:
                frame = _timeout_frame(index, at - (seen_call.get(index) or at))
                line = prefix + json.dumps(frame).encode()
        yield line, frame


def _late(at: float, since: float | None, limit_s: float) -> bool:
    return since is not None and at - since > limit_s + SLACK_S


def _timeout_frame(index: int, seconds: float) -> dict[str, Any]:
    outcome = {"status": "timeout", "t": round(seconds, 6), "host_clock": True}
    return {"event": "result", "i": index, "outcome": outcome}


def _lines(channel: bytes, arrivals: Sequence[Arrival]) -> Iterator[tuple[bytes, float]]:
    """Each line of the channel (the separator dropped) with the time its last byte arrived."""
    totals = [total for total, _ in arrivals]
    offset = 0
    for line in channel.split(b"\n"):
        end = offset + len(line) + 1  # its newline (past the end for a last, unended line)
        slot = min(bisect.bisect_left(totals, min(end, len(channel))), len(arrivals) - 1)
        yield line, arrivals[slot][1]
        offset = end
