"""Pip requirement files and tox or nox lines, parsed by pip-requirements-parser."""

from __future__ import annotations

from pathlib import Path

from replicate.envs.collect import Collected
from replicate.envs.reqfiles import read_requirements, requirement_lines


def _read(root: Path, text: str) -> tuple[list[str], Collected]:
    path = root / "requirements.txt"
    path.write_text(text, encoding="utf-8")
    out = Collected()
    return read_requirements(root, path, out, seen=set()), out


def test_comment_ending_in_a_backslash_does_not_swallow_the_next_line(tmp_path: Path) -> None:
    # pip does not continue a comment line; the hand-written reader joined first and lost pytest
    reqs, _ = _read(tmp_path, "# pinned for CI \\\npytest>=7\n")
    assert reqs == ["pytest>=7"]


def test_options_hashes_markers_and_includes_in_line_order(tmp_path: Path) -> None:
    (tmp_path / "other.txt").write_text("hypothesis\n", encoding="utf-8")
    reqs, out = _read(
        tmp_path,
        "attrs\n"
        "-r other.txt\n"
        "--index-url https://example.invalid/simple\n"
        "-c constraints.txt\n"
        "foo==1.0 \\\n    --hash=sha256:abcd\n"
        'bar[x]>=2 ; python_version >= "3.8"  # comment\n'
        "-e .[test]\n"
        "-e git+https://example.invalid/y.git#egg=y\n"
        "not a requirement!!\n",
    )
    assert reqs == ["attrs", "hypothesis", "foo==1.0", 'bar[x]>=2; python_version >= "3.8"']
    assert out.requested_extras == ["test"]
    assert "dropped URL requirement 'git+https://example.invalid/y.git#egg=y'" in out.notes
    assert "dropped unparseable requirement 'not a requirement!!'" in out.notes


def test_includes_stay_inside_the_repository(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "outside.txt").write_text("secret\n", encoding="utf-8")
    reqs, out = _read(root, "-r ../outside.txt\nsix\n")
    assert reqs == ["six"]
    assert any("outside the repository" in note for note in out.notes)


def test_lines_without_a_file(tmp_path: Path) -> None:
    (tmp_path / "test.txt").write_text("freezegun\n", encoding="utf-8")
    out = Collected()
    lines = ["mock", "-rtest.txt", "-e ./", "# a comment"]
    assert requirement_lines(tmp_path, tmp_path, lines, out) == ["mock", "freezegun"]
    assert out.requested_extras == []
