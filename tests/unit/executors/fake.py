"""An in-memory executor for tests: runs in the calling thread, last item first (a caller that
depends on the order of results fails), and records what it was given."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from replicate.executors import Executor

T = TypeVar("T")
R = TypeVar("R")


class FakeExecutor(Executor):
    name = "fake"

    def __init__(self, work: Callable[[Any], Any] | None = None) -> None:
        self.replacement = work  # when given, runs instead of the work the caller passes
        self.items: list[Any] = []
        self.closed = False

    def map(self, work: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        self.items.extend(items)
        run = self.replacement or work
        for item in reversed(items):
            yield run(item)

    def close(self) -> None:
        self.closed = True
