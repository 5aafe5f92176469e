"""Poetry dependency tables to PEP 508 requirements (converted by poetry-core)."""

from __future__ import annotations

import pytest

from replicate.envs.poetry import poetry_requirement


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("^1.2.3", "x<2.0.0,>=1.2.3"),
        ("^0.2.3", "x<0.3.0,>=0.2.3"),
        ("^0.0.3", "x<0.0.4,>=0.0.3"),
        ("^0", "x<1,>=0"),
        ("~1.2.3", "x<1.3.0,>=1.2.3"),
        ("~1", "x<2,>=1"),
        ("1.2.*", "x==1.2.*"),
        ("2.0", "x==2.0"),
        (">=1.0, <2.0", "x<2.0,>=1.0"),
        (">= 1.0 < 2.0", "x<2.0,>=1.0"),
        ("!=1.5", "x!=1.5"),
        ("*", "x"),
    ],
)
def test_constraints(spec: str, expected: str) -> None:
    assert poetry_requirement("x", spec) == (expected, None)


def test_or_keeps_the_range_spanning_its_alternatives() -> None:
    # the hand-written converter dropped any `||` constraint and kept the bare name
    assert poetry_requirement("b", "^1.0 || ^2.0") == (
        "b<3.0,>=1.0",
        "widened poetry constraint '^1.0 || ^2.0' of b to >=1.0,<3.0",
    )


def test_pre_release_caret() -> None:
    # the hand-written converter read only dotted numbers: `^1.2.3-beta.1` became the bare name
    assert poetry_requirement("c", "^1.2.3-beta.1") == ("c<2.0.0,>=1.2.3b1", None)


def test_python_and_platform_keys_become_markers() -> None:
    # the hand-written converter ignored `python` and `platform`: the dependency was installed
    # on every Python, also where the project never asks for it
    assert poetry_requirement("d", {"version": "^1", "python": "<3.8"}) == (
        'd<2,>=1; python_version < "3.8"',
        None,
    )
    assert poetry_requirement("e", {"version": "^1", "platform": "linux"}) == (
        'e<2,>=1; sys_platform == "linux"',
        None,
    )


def test_poetry_requirement_forms() -> None:
    assert poetry_requirement("a", {"version": "^1", "markers": "sys_platform == 'linux'"}) == (
        'a<2,>=1; sys_platform == "linux"',
        None,
    )
    assert poetry_requirement("f", {"version": "^0.0.4", "extras": ["x"]}) == (
        "f[x]<0.0.5,>=0.0.4",
        None,
    )
    assert poetry_requirement("g", "latest") == ("g", "dropped poetry constraint 'latest' of g")
    assert poetry_requirement("h", {"version": "latest", "extras": ["x"]}) == (
        "h[x]",
        "dropped poetry constraint 'latest' of h",
    )
    assert poetry_requirement("i", {"version": "^1", "markers": "not a marker ==="}) == (
        "i<2,>=1",
        "dropped poetry markers 'not a marker ===' of i",
    )
    assert poetry_requirement("c", [{"version": "1"}, {"version": "2"}])[0] == "c"
    assert poetry_requirement("d", {"path": "../d"}) == (None, "dropped path poetry dependency d")
    assert poetry_requirement("o", {"version": "1", "optional": True}) == (
        None,
        "ignored optional poetry dependency o",
    )
