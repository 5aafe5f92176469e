"""How many candidates' sessions may wait idle (`replicate.jail.candidates.idle_sessions`)."""

from __future__ import annotations

from replicate.jail.candidates import (
    IDLE_CEILING,
    IDLE_SHARE,
    SESSION_MB,
    available_memory_mb,
    idle_sessions,
)


def test_a_sixteenth_of_the_memory_between_the_floor_and_the_ceiling() -> None:
    assert idle_sessions(8, available_mb=IDLE_SHARE * SESSION_MB * 20) == 20
    assert idle_sessions(8, available_mb=512) == 8  # a small machine keeps the old limit
    assert idle_sessions(12, available_mb=0) == 12
    assert idle_sessions(8, available_mb=1 << 30) == IDLE_CEILING


def test_the_memory_available_is_read() -> None:
    assert available_memory_mb() > 0
