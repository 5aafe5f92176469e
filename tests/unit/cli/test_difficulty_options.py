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


UNKNOWN_KIND = "--kinds: unknown task kind 'klass' (choose from function, method, class, module)"


@pytest.mark.parametrize("command", ["run", "export"])
@pytest.mark.parametrize(
    ("option", "said"),
    [
        (
            ["--difficulty", "easy,extreme"],
            "unknown difficulty 'extreme'; choose from easy, medium, hard",
        ),
        (["--kinds", "function,klass"], UNKNOWN_KIND),
    ],
)
def test_an_unknown_band_or_kind_is_a_one_line_error(
    command: str, option: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = ["--agent", "true"] if command == "run" else []
    code = main([command, "--tasks", "t", "--out", "o", *extra, *option])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err == f"error: {said}"


def test_gen_names_an_unknown_kind_as_run_and_export_do() -> None:
    with pytest.raises(ReplicateError, match=re.escape(UNKNOWN_KIND)):
        parse_kinds("function,klass")


def test_a_band_name_is_not_a_prefix() -> None:
    with pytest.raises(ReplicateError):
        parse_bands(["har"])
