"""`difficulty.json` is part of an untrusted batch: a symlink in its place is neither read nor
written through."""

from __future__ import annotations

from pathlib import Path

from replicate.batch.difficulty_file import DIFFICULTY, DifficultyFile, _write, read_difficulty


def test_written_and_read_back(tmp_path: Path) -> None:
    _write(tmp_path, DifficultyFile(tasks={}))
    assert read_difficulty(tmp_path) == DifficultyFile(tasks={})


def test_a_planted_symlink_is_replaced_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    batch = tmp_path / "batch"
    batch.mkdir()
    (batch / (DIFFICULTY + ".tmp")).symlink_to(outside)
    (batch / DIFFICULTY).symlink_to(outside)
    assert read_difficulty(batch) is None  # not read through the link
    _write(batch, DifficultyFile(tasks={}))
    assert outside.read_text() == "keep me"
    assert not (batch / DIFFICULTY).is_symlink()
    assert read_difficulty(batch) == DifficultyFile(tasks={})


def test_a_file_that_is_not_one_is_measured_again(tmp_path: Path) -> None:
    (tmp_path / DIFFICULTY).write_text('{"format": "something else", "tasks": {}}')
    assert read_difficulty(tmp_path) is None
