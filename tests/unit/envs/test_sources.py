"""pyproject.toml readers: PEP 735 dependency groups (resolved by `dependency-groups`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from replicate.envs.collect import Collected
from replicate.envs.sources import is_test_group, read_pyproject


def _groups(root: Path, body: str) -> Collected:
    text = "[dependency-groups]\n" + textwrap.dedent(body)
    (root / "pyproject.toml").write_text(text, encoding="utf-8")
    out = Collected()
    read_pyproject(root, out)
    return out


def test_include_group_names_are_normalised(tmp_path: Path) -> None:
    # PEP 735: `Coverage_Tools` names the group `coverage-tools`; the hand-written reader looked
    # the include up as written and silently lost coverage
    out = _groups(
        tmp_path,
        """
        test = ["pytest-mock", {include-group = "Coverage_Tools"}]
        coverage-tools = ["coverage"]
        """,
    )
    assert out.test == ["pytest-mock", "coverage"]


def test_test_group_names_are_normalised(tmp_path: Path) -> None:
    out = _groups(tmp_path, 'Test_Suite = ["hypothesis"]\n"dev.tools" = ["ruff"]\n')
    assert out.test == ["hypothesis"]
    assert is_test_group("Test_Suite") and is_test_group("DEV") and not is_test_group("lint")


def test_a_cycle_is_reported(tmp_path: Path) -> None:
    out = _groups(
        tmp_path,
        """
        test = ["pytest-mock", {include-group = "dev"}]
        dev = [{include-group = "test"}]
        """,
    )
    assert out.test == []
    assert any("Cyclic dependency group include" in note for note in out.notes)


def test_names_equal_once_normalised_are_reported(tmp_path: Path) -> None:
    out = _groups(tmp_path, 'test_a = ["a"]\ntest-a = ["b"]\n')
    assert out.test == []
    assert any("Duplicate dependency group names" in note for note in out.notes)
