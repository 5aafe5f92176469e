"""Placing the sources of a `--repos` file: one key per repository, a suffix for a second
repository of one name, the ledger's keys kept, two commits beside each other or replaced."""

from __future__ import annotations

from pathlib import Path

from replicate.gen.many.ledger import RepoOutcome
from replicate.gen.many.pin import Pinned
from replicate.gen.many.placing import Placed, Refused, place
from replicate.gen.many.sources import Source

ROOT_A, ROOT_B = "root:" + "a" * 40, "root:" + "b" * 40


def line(text: str, key: str, origin: str, commit: str) -> tuple[Source, Pinned]:
    source = Source(text=text, spec=str(Path("/x") / text), commit=None)
    return source, Pinned(key=key, origin=origin, commit=commit * 40)


def keys(placed: list[Placed | Refused]) -> list[str]:
    return [p.key if isinstance(p, Placed) else f"refused: {p.reason}" for p in placed]


def test_two_repositories_of_one_name_get_distinct_keys() -> None:
    sources = [line("a/src", "src", ROOT_A, "1"), line("b/src", "src", ROOT_B, "2")]
    assert keys(place(sources, {}, replace=False)) == ["src", "src-bbbbbbbb"]


def test_the_ledger_keeps_each_name_with_its_repository() -> None:
    """b/src was minted first, as `src`: listed after a/src now, it keeps the name."""
    earlier = RepoOutcome(
        source="b/src", status="minted", key="src", origin=ROOT_B, commit="2" * 40
    )
    sources = [line("a/src", "src", ROOT_A, "1"), line("b/src", "src", ROOT_B, "2")]
    assert keys(place(sources, {"b/src": earlier}, replace=False)) == ["src-aaaaaaaa", "src"]


def test_one_repository_at_one_commit_is_minted_once() -> None:
    sources = [line("a/src", "src", ROOT_A, "1"), line("clone/src", "src", ROOT_A, "1")]
    assert keys(place(sources, {}, replace=False)) == [
        "src",
        "refused: src is already minted from a/src",
    ]


def test_two_commits_sit_beside_each_other_unless_replace() -> None:
    sources = [line("src@v1", "src", ROOT_A, "1"), line("src@v2", "src", ROOT_A, "2")]
    beside = place(sources, {}, replace=False)
    assert keys(beside) == ["src", "src"]
    assert [p.drop for p in beside if isinstance(p, Placed)] == [("1" * 40,), ("2" * 40,)]
    replaced = place(sources, {}, replace=True)
    assert keys(replaced) == [
        "refused: replaced by src@v2 (--replace: one commit per repository)",
        "src",
    ]
    assert isinstance(replaced[1], Placed) and replaced[1].drop is None  # every other commit


def test_a_line_minted_at_another_commit_before_replaces_its_own_tasks() -> None:
    earlier = RepoOutcome(source="src", status="minted", key="src", origin=ROOT_A, commit="1" * 40)
    (placed,) = place([line("src", "src", ROOT_A, "2")], {"src": earlier}, replace=False)
    assert isinstance(placed, Placed) and placed.drop == ("1" * 40, "2" * 40)


def test_replace_keeps_the_last_commit_listed_even_when_listed_twice() -> None:
    sources = [
        line("src@v1", "src", ROOT_A, "1"),
        line("src@v2", "src", ROOT_A, "2"),
        line("clone@v2", "src", ROOT_A, "2"),
    ]
    assert keys(place(sources, {}, replace=True)) == [
        "refused: replaced by src@v2 (--replace: one commit per repository)",
        "src",
        "refused: src is already minted from src@v2",
    ]
