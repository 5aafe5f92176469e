"""What an executor is: something that runs one function on many items and hands back each
result as its item finishes (in any order)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Executor(ABC):
    """Runs `work` on items, somewhere; `work` and the items must pickle (a remote executor ships
    them to other processes or machines), and `work` must catch its own expected failures: an
    exception it raises ends the whole `map`."""

    name: str = ""

    @abstractmethod
    def map(self, work: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        """`work(item)` for every item; each result yielded as soon as it is ready.

        Called by gen (a target or a repository per item) and `run` (a task's attempt per
        item). Each item is worked on once; results come in any order, so `work` puts in its
        result whatever names the item. The first exception `work` raises is re-raised here;
        when the caller closes the iterator (that, or stopping early), work not yet started is
        cancelled. The caller's thread never blocks longer than a short slice at a time
        (`replicate.executors.waiting`), so a SIGINT/SIGTERM handler runs promptly."""

    def close(self) -> None:  # noqa: B027 - an executor with nothing to release keeps this
        """Release what the executor holds (workers, a cluster connection)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
