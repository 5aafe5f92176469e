"""`llm_deadline.within`: the work's result or exception when it ends in time; else the work is
abandoned (its `abandon` called, which here releases it) and DeadlinePassed raised."""

from __future__ import annotations

import threading

import pytest

from replicate.agents import llm_deadline


def test_the_result_or_the_exception_of_work_that_ends() -> None:
    assert llm_deadline.within(60, lambda: 42, abandon=pytest.fail) == 42

    def fails() -> None:
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        llm_deadline.within(60, fails, abandon=pytest.fail)


def test_work_that_does_not_end_is_abandoned() -> None:
    released = threading.Event()
    finished = threading.Event()

    def stalls() -> None:
        released.wait()
        finished.set()

    with pytest.raises(llm_deadline.DeadlinePassed):
        llm_deadline.within(0.05, stalls, abandon=released.set)
    assert released.is_set()
    assert finished.wait(60)  # the abandoned work ends once abandon() has let it go
