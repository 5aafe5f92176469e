"""The local executor: threads of this process, `parallel` items at a time (no extra install)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from replicate.executors.base import Executor
from replicate.executors.waiting import first_done

T = TypeVar("T")
R = TypeVar("R")


class LocalExecutor(Executor):
    name = "local"

    def __init__(self, parallel: int = 1) -> None:
        self.parallel = max(1, parallel)

    def map(self, work: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        if self.parallel == 1:  # in this thread: a child process it starts dies with the caller
            for item in items:
                yield work(item)
            return
        with ThreadPoolExecutor(max_workers=self.parallel) as pool:
            pending: set[Future[R]] = {pool.submit(work, item) for item in items}
            try:
                while pending:
                    done, pending = first_done(pending)
                    for future in done:
                        yield future.result()
            finally:
                for future in pending:
                    future.cancel()
