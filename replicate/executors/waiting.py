"""Waiting on worker threads from the main thread in short slices, so a signal handler runs.

Python runs a SIGINT or SIGTERM handler (scratch cleanup, then death or KeyboardInterrupt) only
in the main thread, between bytecodes.  A plain `future.result()`, `Executor.map` or `wait(...)`
blocks the main thread on a lock with no time limit; a signal that lands just before that block
(or is taken by another thread) sets Python's flag without waking the lock, and the handler then
waits for the work to finish: for an agent, minutes.  Waiting in slices of `SLICE_S` bounds that
delay.  Every long wait of the main thread goes through here."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

SLICE_S = 0.2


def result_of(future: Future[R]) -> R:
    """`future.result()`, waited for in slices (a TimeoutError the work raised is passed on)."""
    while not wait([future], timeout=SLICE_S).done:
        pass
    return future.result()


def first_done(pending: set[Future[R]]) -> tuple[set[Future[R]], set[Future[R]]]:
    """`wait(pending, return_when=FIRST_COMPLETED)` as (done, not done), waited for in slices."""
    while True:
        done, rest = wait(pending, timeout=SLICE_S, return_when=FIRST_COMPLETED)
        if done or not rest:
            return set(done), set(rest)


def map_in_order(pool: Executor, work: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
    """`pool.map(work, items)`, its results waited for in slices; the rest cancelled on exit."""
    futures = [pool.submit(work, item) for item in items]
    try:
        for future in futures:
            yield result_of(future)
    finally:
        for future in futures:
            future.cancel()
