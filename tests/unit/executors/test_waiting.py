"""The main thread's waits on worker threads let a signal handler run while the work goes on.

The signal is sent to the worker thread itself (`pthread_kill`), as the kernel may deliver a
SIGTERM meant for the process: Python's flag is set, but the main thread's lock is not woken.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from replicate.executors import first_done, map_in_order, result_of
from tests.interrupts import Interrupted, signal_this_thread


def _signalled_work(release: threading.Event, work_s: float) -> str:
    time.sleep(0.3)  # the main thread is blocked in its wait by now
    signal_this_thread()  # taken by this thread, not main
    release.wait(work_s)
    return "done"


def _work_done_when_interrupted(wait_for: Callable[[Future[str]], object], work_s: float) -> bool:
    """Whether the work had ended by the time the handler ran in the main thread (the work
    goes on for `work_s` after the signal, unless the handler ran and released it)."""
    release = threading.Event()
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(_signalled_work, release, work_s)
        try:
            wait_for(future)
            time.sleep(0.5)  # the handler runs at the first bytecode after the wait at the latest
        except Interrupted:
            return future.done()
        finally:
            release.set()
    raise AssertionError("the handler never ran")


def test_a_plain_wait_holds_the_handler_back_until_the_work_ends(sigusr1_interrupts: None) -> None:
    """The positive control: `Future.result()` sleeps through the signal."""
    assert _work_done_when_interrupted(lambda future: future.result(), work_s=1.0)


@pytest.mark.parametrize(
    "wait_for",
    [
        result_of,
        lambda future: first_done({future}),
        lambda future: list(map_in_order(_Pool(future), lambda x: x, [0])),
    ],
    ids=["result_of", "first_done", "map_in_order"],
)
def test_a_sliced_wait_lets_the_handler_run_while_the_work_goes_on(
    sigusr1_interrupts: None, wait_for: Callable[[Future[str]], object]
) -> None:
    assert not _work_done_when_interrupted(wait_for, work_s=60.0)


class _Pool(ThreadPoolExecutor):
    """A pool whose one submission is the future already running (for `map_in_order`)."""

    def __init__(self, future: Future[str]) -> None:
        super().__init__(max_workers=1)
        self._running = future

    def submit(self, fn: object, /, *args: object, **kwargs: object) -> Future[str]:  # type: ignore[override]
        return self._running


def test_map_in_order_keeps_the_order_and_passes_errors_on() -> None:
    def slow_first(n: int) -> int:
        time.sleep(0.3 if n == 0 else 0)
        if n == 3:
            raise TimeoutError("the work's own timeout")
        return n * 10

    with ThreadPoolExecutor(max_workers=3) as pool:
        results = map_in_order(pool, slow_first, range(4))
        assert [next(results) for _ in range(3)] == [0, 10, 20]
        with pytest.raises(TimeoutError, match="the work's own"):
            next(results)
