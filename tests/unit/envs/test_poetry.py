"""Poetry constraints to PEP 440."""

from __future__ import annotations

import pytest

from replicate.envs.poetry import convert_constraint, poetry_requirement


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("^1.2.3", ">=1.2.3,<2"),
        ("^0.2.3", ">=0.2.3,<0.3"),
        ("^0.0.3", ">=0.0.3,<0.0.4"),
        ("^0", ">=0,<1"),
        ("~1.2.3", ">=1.2.3,<1.3"),
        ("~1", ">=1,<2"),
        ("1.2.*", "==1.2.*"),
        ("2.0", "==2.0"),
        (">=1.0, <2.0", ">=1.0,<2.0"),
        (">= 1.0 < 2.0", ">=1.0,<2.0"),
        ("*", ""),
        ("^1.0 || ^2.0", None),
        ("latest", None),
    ],
)
def test_convert_constraint(spec: str, expected: str | None) -> None:
    assert convert_constraint(spec) == expected


def test_poetry_requirement_forms() -> None:
    assert poetry_requirement("a", {"version": "^1", "markers": "sys_platform == 'linux'"}) == (
        'a<2,>=1; sys_platform == "linux"',
        None,
    )
    assert poetry_requirement("b", "^1.0 || ^2.0") == (
        "b",
        "dropped poetry constraint '^1.0 || ^2.0' of b",
    )
    assert poetry_requirement("c", [{"version": "1"}, {"version": "2"}])[0] == "c"
    assert poetry_requirement("d", {"path": "../d"}) == (None, "dropped path poetry dependency d")
