"""Progress displays behind the pipeline's small Progress protocol: rich on a terminal, plain
lines every few seconds elsewhere (a log, a pipe, a CI job, or `--json` on stdout)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from replicate.cli.console import err_console


class RichProgress:
    """One line per stage; stages with a total get a bar."""

    def __init__(self, enabled: bool = True) -> None:
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err_console(),
            disable=not enabled,
            transient=False,
        )
        self._task: TaskID | None = None
        self._description = ""
        self._tasks: int | None = None

    def __enter__(self) -> RichProgress:
        self._progress.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if kind is None:
            self._finish()
            self._progress.__exit__(kind, value, tb)
            return
        # On an error the one line that follows is the whole story: leave no progress behind
        # (rich's Progress.stop would also print an empty line on a non-interactive console).
        self._progress.live.transient = True
        self._progress.live.stop()

    def _finish(self) -> None:
        if self._task is not None:
            task = self._progress.tasks[-1]
            total = task.total if task.total is not None else 1
            self._progress.update(self._task, completed=total, total=total)

    def stage(self, description: str, total: int | None = None) -> None:
        self._finish()
        self._description = description
        self._task = self._progress.add_task(self._described(), total=total)

    def advance(self, n: int = 1) -> None:
        if self._task is not None:
            self._progress.advance(self._task, n)

    def tasks(self, n: int) -> None:
        self._tasks = n
        if self._task is not None:
            self._progress.update(self._task, description=self._described())

    def _described(self) -> str:
        if self._tasks is None:
            return self._description
        return f"{self._description} ({self._tasks} tasks)"


class PlainProgress:
    """A plain line on stderr at each stage and every `every` seconds while one runs (from the
    first `every` seconds on), and one at the end: the stage, items done of its total, tasks so
    far, time elapsed."""

    def __init__(
        self,
        every: float = 5.0,
        write: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._every = every
        self._write = write or _stderr_line
        self._clock = clock
        self._started = clock()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._stage = ""
        self._done = 0
        self._total: int | None = None
        self._tasks: int | None = None
        self._last = ""

    def __enter__(self) -> PlainProgress:
        self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)
        self._ticker.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if kind is None and self._stage:
            self._emit(repeat=False)

    def _tick(self) -> None:
        while not self._stop.wait(self._every):
            if self._stage:
                self._emit()

    def _emit(self, repeat: bool = True) -> None:
        """Write the state now (unless it is the line last written and `repeat` is off). Nothing
        is written in the first `every` seconds: a run refused at once leaves its one error line
        alone on stderr."""
        if repeat and self._clock() - self._started < self._every:
            return
        line = self.line()
        if repeat or line.split("] ", 1)[-1] != self._last.split("] ", 1)[-1]:
            self._write(line)
            self._last = line

    def stage(self, description: str, total: int | None = None) -> None:
        with self._lock:
            self._stage, self._done, self._total = description, 0, total
        self._emit()

    def advance(self, n: int = 1) -> None:
        with self._lock:
            self._done += n

    def tasks(self, n: int) -> None:
        with self._lock:
            self._tasks = n

    def line(self) -> str:
        with self._lock:
            head = f"[{self._clock() - self._started:.0f} s] {self._stage}"
            parts = []
            if self._total is not None:
                parts.append(f"{self._done} of {self._total} done")
            if self._tasks is not None:
                parts.append(f"{self._tasks} tasks so far")
        return f"{head}: {', '.join(parts)}" if parts else head


def progress_display(plain: bool) -> RichProgress | PlainProgress:
    """Rich on a terminal, plain lines when stderr is not one (or when asked for)."""
    if plain or not err_console().is_terminal:
        return PlainProgress()
    return RichProgress()


def _stderr_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
