"""The child's end of pinning a source: a bug of acquiring (the FileNotFoundError a vanished /proc
entry once raised) is that source's one-line failure, not a crash of the command."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.gen.many import pin


def test_a_bug_of_acquiring_is_said_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object) -> None:
        raise FileNotFoundError(2, "No such file or directory", "/proc/123/fdinfo/4")

    monkeypatch.setattr(pin, "acquire", broken)
    result = pin.run(pin.PinJob(spec="/somewhere", commit=None))
    assert result.pinned is None
    assert result.error == (
        "internal error: FileNotFoundError: [Errno 2] No such file or directory: "
        "'/proc/123/fdinfo/4'"
    )


def test_a_refusal_is_said_as_it_is(tmp_path: Path) -> None:
    result = pin.run(pin.PinJob(spec=str(tmp_path / "missing"), commit=None))
    assert result.error == f"no such repository or directory: {tmp_path / 'missing'}"
    assert result.pinned is None
