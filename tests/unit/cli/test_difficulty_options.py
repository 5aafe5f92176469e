"""`--difficulty` and `--kinds` on `run` and `export`: bands and kinds by name, an unknown one a
one-line error."""

from __future__ import annotations

import re

import pytest

from replicate.batch.difficulty_file import parse_bands
from replicate.cli.main import main
from replicate.errors import ReplicateError
from replicate.gen import parse_kinds


def test_bands_repeated_or_as_a_comma_list() -> None:
    assert parse_bands(["hard", "easy,medium", " hard "]) == ("hard", "easy", "medium")
    assert parse_bands([]) == ()


@pytest.mark.parametrize("command", ["run", "export"])
def test_an_unknown_band_is_a_one_line_error(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = ["--agent", "true"] if command == "run" else []
    code = main([command, "--tasks", "t", "--out", "o", *extra, "--difficulty", "easy,extreme"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err == "error: unknown difficulty 'extreme'; choose from easy, medium, hard"


def test_a_band_name_is_not_a_prefix() -> None:
    with pytest.raises(ReplicateError):
        parse_bands(["har"])


@pytest.mark.parametrize("command", ["run", "export"])
def test_an_unknown_kind_is_a_one_line_error_naming_the_choices(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = ["--agent", "true"] if command == "run" else []
    code = main([command, "--tasks", "t", "--out", "o", *extra, "--kinds", "function,klass"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    said = "--kinds: unknown task kind 'klass' (choose from function, method, class, module)"
    assert err == f"error: {said}"
    with pytest.raises(ReplicateError, match=re.escape(said)):  # as gen's parse_kinds says it
        parse_kinds("function,klass")
