"""One exact pin per distribution: the highest, or the runtime's; the rest untouched."""

from __future__ import annotations

from packaging.version import Version

from replicate.envs.pins import exact_pin, one_pin_each


def test_the_highest_pin_is_kept_with_every_spelling_of_it() -> None:
    reqs = [
        "attrs==22.2.0",
        "attrs==23.1.0",
        "coverage[toml]==7.3.2",
        "coverage==5.5",
        "coverage==7.3.2",
    ]
    kept, dropped = one_pin_each(reqs)
    assert kept == ["attrs==23.1.0", "coverage[toml]==7.3.2", "coverage==7.3.2"]
    assert dropped == ["attrs==22.2.0", "coverage==5.5"]


def test_versions_compare_as_versions_not_text() -> None:
    kept, dropped = one_pin_each(["pytest==10.0", "pytest==9.2.1"])
    assert (kept, dropped) == (["pytest==10.0"], ["pytest==9.2.1"])


def test_a_runtime_pin_wins_over_the_tests() -> None:
    kept, dropped = one_pin_each(["attrs==23.1.0", "Attrs==22.2.0", "six"], over=["attrs==22.2.0"])
    assert kept == ["Attrs==22.2.0", "six"] and dropped == ["attrs==23.1.0"]


def test_what_is_not_one_exact_pin_is_left_alone() -> None:
    reqs = [
        "pytest>=7",
        "pytest==7.*",
        "pytest==6.2.5",
        "pytest>=6,==6.2",
        "not a requirement ==",
        "six",
    ]
    kept, dropped = one_pin_each(reqs)
    assert kept == reqs and dropped == []
    assert exact_pin("Pytest==6.2.5") == ("pytest", Version("6.2.5"))
    assert exact_pin("pytest==7.*") is None and exact_pin("pytest~=7.0") is None
