from __future__ import annotations

from pathlib import Path

import pytest

from replicate.errors import ReplicateError
from replicate.gen.many.sources import Source, parse_sources, read_sources

BASE = Path("/data/repos")


def test_lines_comments_commits_and_kinds() -> None:
    text = """
# libraries to mint
https://github.com/a/b@v1.2   # a tag
git@github.com:a/b
git@example.org:c/d@0123abcd
pypi:tomli==2.0.1
npm:minimist@1.2.8

./local@main
../up
"""
    assert parse_sources(text, BASE) == (
        Source("https://github.com/a/b@v1.2", "https://github.com/a/b", "v1.2"),
        Source("git@github.com:a/b", "git@github.com:a/b", None),
        Source("git@example.org:c/d@0123abcd", "git@example.org:c/d", "0123abcd"),
        Source("pypi:tomli==2.0.1", "pypi:tomli==2.0.1", None),
        Source("npm:minimist@1.2.8", "npm:minimist@1.2.8", None),  # its `@` is no commit
        Source("./local@main", "/data/repos/local", "main"),
        Source("../up", "/data/up", None),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("pypi:tomli", "a PyPI source is pypi:NAME==VERSION"),
        ("pypi:tomli>=2", "a PyPI source is pypi:NAME==VERSION"),
        ("pypi:tomli==2.0.1@abc", "pinned by its version"),
        ("npm:minimist", "an npm source is npm:NAME@VERSION"),
        ("npm:minimist@", "an npm source is npm:NAME@VERSION"),
        ("a b", "line 1: one source a line"),
        ("x\n./x", "line 2: ./x is listed twice"),
    ],
)
def test_bad_lines_are_one_line_errors(text: str, message: str) -> None:
    with pytest.raises(ReplicateError, match=message):
        parse_sources(text, BASE)


def test_a_file_without_sources(tmp_path: Path) -> None:
    path = tmp_path / "repos.txt"
    path.write_text("# nothing yet\n\n")
    with pytest.raises(ReplicateError, match="names no repository"):
        read_sources(path)
    with pytest.raises(ReplicateError, match="cannot read"):
        read_sources(tmp_path / "absent.txt")
