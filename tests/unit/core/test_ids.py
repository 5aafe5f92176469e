"""Repository keys and task ids: stable, distinct and safe as file names."""

from __future__ import annotations

import re

import pytest

from replicate.core.ids import normalise_repo_url, repo_dir_name, slug, task_id

SAFE = re.compile(r"^[A-Za-z0-9._-]+$")
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/a/b",
        "https://github.com/a/b.git",
        "https://github.com/a/b/",
        "https://github.com/a/b.git/",
        "https://GitHub.COM/a/b",
        "http://user:secret@github.com/a/b.git",
        "git@github.com:a/b",
        "git@github.com:a/b.git",
        "git@github.com:/a/b.git",
        "ssh://git@github.com/a/b/",
        "ssh://git@github.com:22/a/b.git",
        "  https://github.com/a/b.git \n",
    ],
)
def test_every_spelling_of_one_remote_gives_one_key(url: str) -> None:
    assert normalise_repo_url(url) == "github.com/a/b"


def test_different_remotes_give_different_keys() -> None:
    keys = {
        normalise_repo_url(u)
        for u in (
            "https://github.com/a/b",
            "https://github.com/a/c",
            "https://gitlab.com/a/b",
            "https://github.com/x/a/b",
        )
    }
    assert len(keys) == 4


def test_a_url_without_host_keeps_its_path() -> None:
    assert normalise_repo_url("file:///srv/repos/lib.git") == "srv/repos/lib"


def test_task_id_is_stable_and_readable() -> None:
    first = task_id("github.com/a/b", COMMIT, "b.mod.func")
    assert first == task_id("github.com/a/b", COMMIT, "b.mod.func")
    assert first.startswith("b__b.mod.func__")
    assert re.fullmatch(r"b__b\.mod\.func__[0-9a-f]{10}", first)


def test_task_id_changes_with_repo_commit_and_symbol() -> None:
    base = ("github.com/a/b", COMMIT, "b.mod.func")
    variants = [
        base,
        ("github.com/c/b", COMMIT, "b.mod.func"),  # same folder name, other owner
        ("github.com/a/b", "f" * 40, "b.mod.func"),
        ("github.com/a/b", COMMIT, "b.mod.other"),
        ("github.com/a/b", COMMIT, "b.mod.Cls.func"),
    ]
    assert len({task_id(*v) for v in variants}) == len(variants)


@pytest.mark.parametrize(
    ("key", "symbol"),
    [
        ("github.com/a/b", "pkg.mod.func"),
        ("my lib/with spaces", "pkg.mod.<lambda>"),
        ("..", "../../etc/passwd"),
        ("gitlab.com/x/ünïcode", "pkg.mod.Clé.méthode"),
        ("", ""),
    ],
)
def test_task_id_and_repo_dir_are_safe_file_names(key: str, symbol: str) -> None:
    for name in (task_id(key, COMMIT, symbol), repo_dir_name(key, COMMIT)):
        assert SAFE.match(name), name
        assert name not in (".", "..") and not name.startswith(("-", "."))


def test_repo_dir_name_pins_commit_and_key() -> None:
    name = repo_dir_name("github.com/a/b", COMMIT)
    assert name.startswith("b-") and name.endswith("-" + COMMIT[:12])
    assert name != repo_dir_name("github.com/c/b", COMMIT)
    assert name != repo_dir_name("github.com/a/b", "f" * 40)


def test_slug() -> None:
    assert slug("a/b c") == "a-b-c"
    assert slug("pkg.mod.func") == "pkg.mod.func"
    assert slug("...") == "x"
    assert slug("/") == "x"
