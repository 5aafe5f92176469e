"""Cutting a session's channel into its runs (`replicate.jail.session.take`), no jail."""

from __future__ import annotations

import json

import pytest

from replicate.jail import session as session_module
from replicate.jail.calltime import CallClock, LiveFrames
from replicate.jail.series import _cut
from replicate.jail.session import Run, _clipped, take


def _frame(nonce: str, frame: dict[str, object]) -> bytes:
    return f"{nonce} {json.dumps(frame)}\n".encode()


def _program(nonce: str, value: int) -> bytes:
    outcome = {"status": "returned", "value": {"t": "int", "v": str(value)}, "t": 0.0}
    frames = (
        {"event": "started"},
        {"event": "result", "i": 0, "outcome": outcome},
        {"event": "done"},
    )
    return b"".join(_frame(nonce, frame) for frame in frames)


def _exited(nonce: str, k: int, status: int = 0) -> bytes:
    frame = {"event": "exited", "k": k, "status": status, "timed_out": False, "s": 0.25}
    return b"\n" + _frame("x" + nonce, frame)


def _run(k: int, nonce: str) -> Run:
    return Run(k, nonce, LiveFrames(nonce, CallClock((0,), 1.0)), None, 1.0)


def test_a_chunk_holding_two_runs_is_cut_at_the_exited_frame() -> None:
    first, second = _run(1, "aaa1"), _run(2, "bbb2")
    chunk = _program("aaa1", 1) + _exited("aaa1", 1) + _program("bbb2", 2)
    rest, frames = take(first, chunk, 1.0)
    assert first.exited is not None and first.exited["k"] == 1
    assert bytes(first.data[: first.end]) == _program("aaa1", 1) + b"\n"
    assert [f["event"] for f in frames if f] == ["started", "result", "done"]
    assert rest == _program("bbb2", 2)
    rest, _ = take(second, rest, 2.0)
    assert rest == b"" and second.exited is None  # its frame has not come yet
    take(second, _exited("bbb2", 2, 3), 3.0)
    assert second.exited is not None and second.exited["status"] == 3


def test_an_exited_frame_split_across_chunks_is_found() -> None:
    run = _run(1, "aaa1")
    whole = _program("aaa1", 1) + _exited("aaa1", 1)
    cut = len(_program("aaa1", 1)) + 3  # inside the exited frame's mark
    take(run, whole[:cut], 1.0)
    assert run.exited is None
    take(run, whole[cut:], 2.0)
    assert run.exited is not None and run.end == len(_program("aaa1", 1)) + 1


def test_a_frame_under_a_run_s_nonce_does_not_end_it() -> None:
    run = _run(1, "aaa1")
    forged = _frame("aaa1", {"event": "exited", "k": 1, "status": 0})
    take(run, _program("aaa1", 1) + forged, 1.0)
    assert run.exited is None


def test_arrivals_are_clipped_at_the_run_s_end() -> None:
    assert _clipped(((10, 1.0), (25, 2.0), (40, 3.0)), 30) == ((10, 1.0), (25, 2.0), (30, 3.0))
    assert _clipped(((10, 1.0), (25, 2.0)), 10) == ((10, 1.0),)


def test_programs_are_cut_into_near_equal_runs() -> None:
    assert _cut(5, 2) == [range(0, 2), range(2, 5)]
    assert _cut(1, 4) == [range(0, 1)]
    assert _cut(0, 2) == []


def test_a_run_that_floods_its_channel_still_ends_at_its_exited_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the channel's cap nothing more is kept, but the exited frame is still found (else
    the host would wait out the run's limit and give the session up)."""
    monkeypatch.setattr(session_module, "CHANNEL_CAP", 300)
    run = _run(1, "aaa1")
    kept = _program("aaa1", 1)
    flood = b"x" * 1000
    exited = _exited("aaa1", 1, 7)
    cut = len(exited) // 2
    take(run, kept + flood[:100], 1.0)
    for part in (flood[100:600], flood[600:] + exited[:4], exited[4:cut]):
        assert take(run, part, 2.0) == (b"", [])
        assert run.exited is None
    rest, _ = take(run, exited[cut:] + _program("bbb2", 2), 3.0)
    assert run.exited is not None and run.exited["status"] == 7
    assert rest == _program("bbb2", 2)
    # kept: up to the chunk that crossed the cap, nothing after it
    assert bytes(run.data) == kept + flood[:600] and run.end == len(run.data)
