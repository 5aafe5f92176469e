"""The per-call limit held by the host's clock: late results become timeouts, in a real jail too."""

from __future__ import annotations

import itertools
import json

from replicate.grading.grader import original_source
from replicate.jail.calls import RepoContext, run_calls
from replicate.jail.calltime import (
    SLACK_S,
    CallClock,
    LiveFrames,
    timed_frames,
)
from replicate.jail.frames import ParsedRun, collect_frames
from replicate.sandbox import get_sandbox
from replicate.sandbox.arrivals import ArrivalLog
from tests.integration.minted import Tiny

NONCE = "n0"
CLOCK = CallClock(order=(0, 1), call_timeout_s=1.0, load_allowance_s=5.0)


def frame(**fields: object) -> bytes:
    return f"{NONCE} {json.dumps(fields, separators=(',', ':'))}".encode()  # as the runner


def channel(*timed: tuple[bytes, float]) -> tuple[bytes, list[tuple[int, float]]]:
    """The channel's bytes, and one arrival note per line at the given host time."""
    data, notes = b"", []
    for line, at in timed:
        data += line + b"\n"
        notes.append((len(data), at))
    return data, notes


def parsed(data: bytes, notes: list[tuple[int, float]]) -> ParsedRun:
    return collect_frames(timed_frames(data, notes, NONCE, CLOCK))


def outcomes(data: bytes, notes: list[tuple[int, float]]) -> dict[int, object]:
    return {i: o["status"] for i, o in parsed(data, notes).outcomes.items()}


RETURNED = {"status": "returned", "value": {"t": "int", "v": "1"}, "args": [], "kwargs": {}}


def test_results_within_the_limit_are_kept_and_call_frames_dropped() -> None:
    data, notes = channel(
        (frame(event="ready"), 0.0),
        (frame(event="call", i=0), 0.1),
        (frame(event="result", i=0, outcome=RETURNED), 0.9),
        (frame(event="call", i=1), 1.0),
        (frame(event="result", i=1, outcome=RETURNED), 1.0 + 1.0 + SLACK_S - 0.01),
    )
    frames = timed_frames(data, notes, NONCE, CLOCK)
    assert frames == timed_frames(data, [], NONCE, CLOCK)  # as if no arrival were noted
    assert [f["event"] for f in frames if f] == ["ready", "result", "result"]
    assert outcomes(data, notes) == {0: "returned", 1: "returned"}
    assert parsed(data, notes).rejected_frames == 0


def test_a_result_after_the_limit_is_a_timeout() -> None:
    data, notes = channel(
        (frame(event="ready"), 0.0),
        (frame(event="call", i=0), 0.1),
        (frame(event="result", i=0, outcome=RETURNED), 0.1 + 1.0 + SLACK_S + 0.01),
        (frame(event="call", i=1), 2.0),
        (frame(event="result", i=1, outcome=RETURNED), 2.1),
    )
    assert outcomes(data, notes) == {0: "timeout", 1: "returned"}
    assert outcomes(data, []) == {0: "returned", 1: "returned"}  # no arrivals: the runner's timer
    assert parsed(data, notes).ready


def test_forged_or_missing_call_frames_do_not_move_the_clock() -> None:
    data, notes = channel(
        (frame(event="ready"), 0.0),
        (frame(event="call", i=0), 0.1),
        (frame(event="call", i=0), 3.0),  # a second, later announcement counts for nothing
        (frame(event="result", i=0, outcome=RETURNED), 3.1),
        # no call frame for input 1: bounded by the result before it plus one load's allowance
        (frame(event="result", i=1, outcome=RETURNED), 3.1 + 1.0 + 5.0 + SLACK_S + 0.01),
    )
    assert outcomes(data, notes) == {0: "timeout", 1: "timeout"}


def test_the_first_call_without_a_call_frame_is_timed_from_the_loaded_frame() -> None:
    # The runner unpickles every input between `ready` and `loaded` (slow when a test module
    # and pytest get imported): that time is not the first call's. A forged early `loaded`
    # only moves the reference earlier; a late one counts for nothing.
    bound = 1.0 + 5.0 + SLACK_S
    data, notes = channel(
        (frame(event="ready"), 0.0),
        (frame(event="loaded"), 20.0),
        (frame(event="result", i=0, outcome=RETURNED), 20.0 + bound - 0.01),
        (frame(event="loaded"), 30.0),
        (frame(event="result", i=1, outcome=RETURNED), 20.0 + 2 * bound - 0.02),
    )
    assert outcomes(data, notes) == {0: "returned", 1: "returned"}
    data, notes = channel(
        (frame(event="ready"), 0.0),
        (frame(event="loaded"), 20.0),
        (frame(event="result", i=0, outcome=RETURNED), 20.0 + bound + 0.01),
    )
    assert outcomes(data, notes) == {0: "timeout"}
    assert parsed(data, notes).rejected_frames == 0


def test_a_late_result_is_replaced_by_a_host_clock_timeout_in_place() -> None:
    data, notes = channel(
        (frame(event="ready"), 0.0),
        (frame(event="call", i=0), 0.1),
        (frame(event="result", i=0, outcome=RETURNED), 5.0),
        (b"junk", 5.0),
        (frame(event="call", i=1), 5.1),
        (frame(event="result", i=1, outcome=RETURNED), 5.2),
    )
    ready, late, junk, kept = timed_frames(data, notes, NONCE, CLOCK)
    assert ready == {"event": "ready"} and junk is None
    timeout = {"status": "timeout", "t": 4.9, "host_clock": True}
    assert late == {"event": "result", "i": 0, "outcome": timeout}
    assert kept == {"event": "result", "i": 1, "outcome": RETURNED}


def _chunked(
    data: bytes, notes: list[tuple[int, float]], cuts: list[int]
) -> tuple[LiveFrames, list[tuple[int, float]]]:
    """Feed `data` as a backend would, read in pieces cut at `cuts` (inside lines too) and at
    the notes' bounds, each piece at the time of the note that covers it; the backend's notes."""
    live, fed = LiveFrames(NONCE, CLOCK), []
    bounds = [0, *sorted(set(cuts) | {total for total, _ in notes}), len(data)]
    for start, end in itertools.pairwise(bounds):
        if end > start:
            at = next(when for total, when in notes if total >= end)
            live.feed(data[start:end], at)
            fed.append((end, at))
    return live, fed


def test_frames_parsed_while_the_channel_arrives_are_the_frames_parsed_after() -> None:
    data, notes = channel(
        (frame(event="ready"), 0.0),
        (frame(event="call", i=0), 0.1),
        (frame(event="result", i=0, outcome=RETURNED), 5.0),  # late: becomes a timeout
        (b"junk", 5.0),
        (frame(event="call", i=1), 5.1),
        (frame(event="result", i=1, outcome=RETURNED), 5.2),
        (frame(event="done"), 5.3),
    )
    after = timed_frames(data, notes, NONCE, CLOCK)
    assert collect_frames(after).outcomes[0]["status"] == "timeout"
    for cuts in ([], [3], [17, 40, 41, 90], list(range(1, len(data), 7))):
        live, fed = _chunked(data, notes, cuts)
        assert live.result(data, fed) is live.frames  # no second parse
        assert live.frames == after == timed_frames(data, fed, NONCE, CLOCK)
    unended = data + b"junk without a newline"
    live, fed = _chunked(unended, [*notes, (len(unended), 6.0)], [len(data) + 2])
    assert live.result(unended, fed) == timed_frames(unended, fed, NONCE, CLOCK) == [*after, None]


def test_live_frames_fall_back_to_a_fresh_parse_when_the_channel_was_capped() -> None:
    data, notes = channel(
        (frame(event="ready"), 0.0),
        (frame(event="result", i=0, outcome=RETURNED), 0.5),
    )
    live = LiveFrames(NONCE, CLOCK)
    live.feed(data + frame(event="result", i=1, outcome=RETURNED) + b"\n", 0.5)  # past the cap
    kept = live.result(data, notes)
    assert kept == timed_frames(data, notes, NONCE, CLOCK) and kept is not live.frames
    assert sorted(collect_frames(kept).outcomes) == [0]


def test_one_arrival_for_many_lines_and_foreign_lines() -> None:
    data = b"\n".join(
        [b"junk", frame(event="call", i=0), b"other " + frame(event="result", i=0), b""]
    )
    notes = [(len(data), 9.0)]
    assert timed_frames(data, notes, NONCE, CLOCK) == [None, None]  # the call frame dropped


def test_arrival_log() -> None:
    log = ArrivalLog()
    log.note(5)
    log.note(0)
    log.note(3)
    assert [total for total, _ in log.freeze()] == [5, 8]


SLOW_IGNORING_ALARM = b"""

import signal as _s
import sys as _sys
import time as _t

_main = _sys.modules["__main__"]
for _name in ("_setitimer", "_signal"):
    setattr(_main, _name, lambda *a, **k: (0.0, 0.0))
_main._perf = lambda: 0.0


def clamp(value, low, high):
    _s.signal(_s.SIGALRM, _s.SIG_IGN)
    _t.sleep(0.6)
    return max(low, min(value, high))
"""


def test_a_candidate_that_switches_off_the_runners_timer_times_out(
    tiny: Tiny, tiny_ctx: RepoContext
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    settings = task.hidden.grading.model_copy(update={"call_timeout_s": 0.05})
    inputs = task.inputs[:2]
    candidate = original_source(task) + SLOW_IGNORING_ALARM
    run = run_calls(
        tiny_ctx, task.hidden.target, inputs, get_sandbox("local"), settings, override=candidate
    )
    assert run.result.channel_arrivals, "the local sandbox notes when the channel's bytes arrive"
    assert run.parsed.ready and run.parsed.done
    statuses = {i: o["status"] for i, o in run.parsed.outcomes.items()}
    assert statuses == {item.index: "timeout" for item in inputs}
    assert all(o.get("host_clock") for o in run.parsed.outcomes.values())
    # the same candidate without the patches is stopped by the runner's own timer
    honest = original_source(task) + b"\n\ndef clamp(value, low, high):\n    return value\n"
    run = run_calls(
        tiny_ctx, task.hidden.target, inputs, get_sandbox("local"), settings, override=honest
    )
    assert {o["status"] for o in run.parsed.outcomes.values()} == {"returned"}
