"""A rich progress display behind the pipeline's small Progress protocol."""

from __future__ import annotations

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
        self._task = self._progress.add_task(description, total=total)

    def advance(self, n: int = 1) -> None:
        if self._task is not None:
            self._progress.advance(self._task, n)
