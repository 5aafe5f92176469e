"""Cutting a series' channel into its programs' runs (`replicate.jail.series`), no jail."""

from __future__ import annotations

import json

from replicate.core import CallInput, GradingSettings
from replicate.jail.sandbox.base import SandboxResult
from replicate.jail.series import _cut, cut_arrivals, split_series

OWN, FIRST, SECOND = "own0", "aaa1", "bbb2"
INPUTS = [CallInput(index=0, pickle_b64="")]


def _frame(nonce: str, frame: dict[str, object]) -> bytes:
    return f"{nonce} {json.dumps(frame)}\n".encode()


def _program(nonce: str, value: int) -> bytes:
    outcome = {"status": "returned", "value": {"t": "int", "v": str(value)}, "t": 0.0}
    return b"".join(
        _frame(nonce, frame)
        for frame in (
            {"event": "started"},
            {"event": "ready"},
            {"event": "loaded"},
            {"event": "result", "i": 0, "outcome": outcome},
            {"event": "done"},
        )
    )


def _exited(k: int, status: int = 0, timed_out: bool = False) -> bytes:
    frame = {"event": "exited", "k": k, "status": status, "timed_out": timed_out, "s": 0.25}
    return b"\n" + _frame(OWN, frame)


def _result(channel: bytes) -> SandboxResult:
    arrivals = ((len(channel) // 2, 1.0), (len(channel), 2.0))
    return SandboxResult(0, False, 3.0, channel=channel, channel_arrivals=arrivals)


def test_each_program_gets_its_own_part_of_the_channel() -> None:
    channel = _program(FIRST, 1) + _exited(0) + _program(SECOND, 2) + _exited(1, 3)
    runs = split_series(_result(channel), [FIRST, SECOND], OWN, INPUTS, GradingSettings())
    assert [run.parsed.outcomes[0]["value"]["v"] for run in runs if run] == ["1", "2"]
    assert [run.result.exit_code for run in runs if run] == [0, 3]
    assert [run.result.duration_s for run in runs if run] == [0.25, 0.25]


def test_a_program_with_no_exited_frame_is_none() -> None:
    channel = _program(FIRST, 1) + _exited(0) + _program(SECOND, 2)  # the series died
    runs = split_series(_result(channel), [FIRST, SECOND], OWN, INPUTS, GradingSettings())
    assert runs[0] is not None and runs[1] is None


def test_a_frame_under_a_program_s_nonce_does_not_end_it() -> None:
    forged = _frame(FIRST, {"event": "exited", "k": 1, "status": 0, "timed_out": False})
    channel = _program(FIRST, 1) + forged + _exited(0)
    runs = split_series(_result(channel), [FIRST, SECOND], OWN, INPUTS, GradingSettings())
    assert runs[0] is not None and runs[1] is None


def test_a_program_killed_at_its_limit_timed_out() -> None:
    channel = b'aaa1 {"event": "sta' + _exited(0, 137, timed_out=True)  # cut mid-frame
    runs = split_series(_result(channel), [FIRST], OWN, INPUTS, GradingSettings())
    assert runs[0] is not None
    assert runs[0].result.timed_out and runs[0].result.exit_code is None


def test_arrivals_are_counted_from_the_part_s_start() -> None:
    arrivals = ((10, 1.0), (25, 2.0), (40, 3.0))
    assert cut_arrivals(arrivals, 10, 30) == ((15, 2.0), (20, 3.0))
    assert cut_arrivals(arrivals, 0, 10) == ((10, 1.0),)
    assert cut_arrivals(arrivals, 40, 40) == ()


def test_programs_are_cut_into_near_equal_runs() -> None:
    assert _cut(5, 2) == [range(0, 2), range(2, 5)]
    assert _cut(1, 4) == [range(0, 1)]
    assert _cut(0, 2) == []
