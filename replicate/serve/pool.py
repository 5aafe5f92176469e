"""Grading off the event loop: a bounded pool of grading processes behind a bounded queue.

At most `workers` grades run at once and at most `queue` more wait; a request whose grades would
not fit is turned away at once (the server answers 503 with Retry-After) instead of piling up.
The grades run in processes of their own (started with the server, each with its own grader and
warm jails): compiling, parsing and comparing a candidate are C calls that hold the interpreter
lock, which on a thread of the server would keep its event loop, and /health, waiting.
"""

from __future__ import annotations

import asyncio
import dataclasses
import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from replicate.integrations import GraderRecipe
from replicate.serve import workers as worker
from replicate.serve.metrics import Metrics

T = TypeVar("T")


class Full(Exception):
    """The queue has no room for the request's grades."""


class GradingPool:
    def __init__(self, workers: int, queue: int, metrics: Metrics, recipe: GraderRecipe) -> None:
        self.workers = workers
        self.capacity = workers + queue
        self._metrics = metrics
        # one grade at a time a process: a started jail for it and a spare, per task
        self._recipe = dataclasses.replace(recipe, warm_per_key=min(recipe.warm_per_key, 2))
        self._executor: ProcessPoolExecutor | None = None
        self._slots: asyncio.Semaphore | None = None
        self._lock = threading.Lock()
        self._admitted = 0
        self._running = 0

    async def start(self) -> list[str]:
        """Start the grading processes (at the server's startup, not at import) and wait until
        each has its grader; the problems they report."""
        self._slots = asyncio.Semaphore(self.workers)
        self._executor = self._new_executor()
        loop = asyncio.get_running_loop()
        ready = [loop.run_in_executor(self._executor, worker.prepare) for _ in range(self.workers)]
        return sorted({p for problems in await asyncio.gather(*ready) for p in problems})

    def _new_executor(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),  # no copy of the server's threads
            initializer=worker.start,
            initargs=(self._recipe,),
        )

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

    async def run(self, work: Callable[..., T], *args: Any) -> T:
        """Run admitted work in a grading process, at most `workers` at once; the caller awaits
        it without blocking the loop."""
        assert self._slots is not None, "the pool is started with the server"
        async with self._slots:
            with self._lock:
                self._running += 1
                self._publish()
            try:
                return await self.call(work, *args)
            finally:
                with self._lock:
                    self._running -= 1
                    self._publish()

    async def call(self, work: Callable[..., T], *args: Any) -> T:
        """`work(*args)` in a grading process, outside the count of grades (a body's decoding).
        A process that died (killed, out of memory) breaks the pool: a new one is started for
        the next call, and this one raises BrokenProcessPool."""
        executor = self._executor
        assert executor is not None, "the pool is started with the server"
        try:
            return await asyncio.wrap_future(executor.submit(work, *args))
        except BrokenProcessPool:
            with self._lock:
                if self._executor is executor:
                    self._executor = self._new_executor()
            executor.shutdown(wait=False, cancel_futures=True)
            raise

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
