"""A batch's grades over many target files, in no order (as a trainer's reward calls come), each
find their file's session idle: the server's and reward functions' `Grader` keeps as many idle
as memory allows (`idle_sessions`), not the 8 it kept before, which made such a batch start a
session for nearly every grade.  Bundled batch (the sample library), candidates run once (the
stub: reward 0, no second run), 2 rounds over one task of each of 5 files."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.grading import stubbed_source
from replicate.integrations import grading
from replicate.integrations.grading import Grader

ROOT = Path(__file__).resolve().parents[3]
FILES = 5


def _one_task_per_file(grader: Grader) -> list[str]:
    found: dict[str, str] = {}
    for ident in grader.batch.select((), None):
        found.setdefault(grader.batch.spec(ident).source.path, ident)
    assert len(found) >= FILES
    return list(found.values())[:FILES]


def _started(monkeypatch: pytest.MonkeyPatch, idle: int | None) -> int:
    if idle is not None:
        monkeypatch.setattr(grading, "idle_sessions", lambda floor: idle)
    grader = Grader(ROOT, warm=True)
    try:
        assert grader.forks is not None
        ids = _one_task_per_file(grader)
        for _ in range(2):
            for ident in ids:
                task = grader.task(ident)
                assert grader.grade(ident, stubbed_source(task).decode()).reward == 0.0
        return grader.forks.started
    finally:
        grader.close()


def test_a_batch_over_many_files_reuses_each_files_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _started(monkeypatch, None) == FILES  # one session a file, kept for its next grade


def test_control_with_the_old_handful_idle_every_grade_starts_a_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _started(monkeypatch, 2) == 2 * FILES
