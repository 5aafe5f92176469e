"""Grading off the event loop: a bounded thread pool behind a bounded queue.

At most `workers` grades run at once and at most `queue` more wait; a request whose grades would
not fit is turned away at once (the server answers 503 with Retry-After) instead of piling up.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from replicate.serve.metrics import Metrics

T = TypeVar("T")


class Full(Exception):
    """The queue has no room for the request's grades."""


class GradingPool:
    def __init__(self, workers: int, queue: int, metrics: Metrics) -> None:
        self.workers = workers
        self.capacity = workers + queue
        self._metrics = metrics
        self._executor = ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="replicate-serve"
        )
        self._lock = threading.Lock()
        self._admitted = 0
        self._running = 0

    def admit(self, n: int) -> None:
        """Reserve room for `n` grades, or raise Full."""
        with self._lock:
            if self._admitted + n > self.capacity:
                raise Full(f"{self._admitted} grades in flight (room for {self.capacity})")
            self._admitted += n
            self._publish()

    def release(self, n: int) -> None:
        with self._lock:
            self._admitted -= n
            self._publish()

    def _publish(self) -> None:
        self._metrics.running.set(self._running)
        self._metrics.queued.set(max(0, self._admitted - self._running))

    async def run(self, work: Callable[[], T]) -> T:
        """Run admitted work on a pool thread; the caller awaits it without blocking the loop."""

        def counted() -> T:
            with self._lock:
                self._running += 1
                self._publish()
            try:
                return work()
            finally:
                with self._lock:
                    self._running -= 1
                    self._publish()

        return await asyncio.wrap_future(self._executor.submit(counted))

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
