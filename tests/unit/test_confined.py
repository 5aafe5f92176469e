"""Files under a root, never outside it: plain relative paths only, no symlink on the way."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate import confined
from replicate.core.paths import name_problem, path_problem


@pytest.mark.parametrize(
    "path", ["/etc/passwd", "../x", "a/../../x", "a//b", "./a", "a/.", "", "a\\b", "a\x00b"]
)
def test_paths_that_are_not_plain_are_refused(tmp_path: Path, path: str) -> None:
    assert path_problem(path) is not None
    with pytest.raises(confined.ConfinementError):
        confined.write_bytes(tmp_path, path, b"x")


@pytest.mark.parametrize("path", ["a", "a/b.py", "src/pkg/mod.py", "a..b/c"])
def test_plain_paths_pass(path: str) -> None:
    assert path_problem(path) is None


@pytest.mark.parametrize("name", ["../x", ".hidden", "a/b", "", "a b", "x" * 256])
def test_names_that_are_not_plain_are_refused(name: str) -> None:
    assert name_problem(name) is not None


def test_write_makes_folders_and_replaces_the_leaf(tmp_path: Path) -> None:
    confined.write_bytes(tmp_path, "a/b/c.txt", b"one")
    confined.write_bytes(tmp_path, "a/b/c.txt", b"two")
    assert (tmp_path / "a" / "b" / "c.txt").read_bytes() == b"two"
    assert confined.read_bytes(tmp_path, "a/b/c.txt") == b"two"
    assert confined.read_bytes(tmp_path, "a/b/c.txt", limit=1) == b"tw"


def test_a_symlinked_folder_on_the_way_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    (root / "a").symlink_to(outside)
    (root / "a" / "f").write_bytes(b"secret")  # the control: a plain join goes through
    with pytest.raises(confined.ConfinementError) as info:
        confined.write_bytes(root, "a/f", b"x")
    assert info.value.symlink
    with pytest.raises(confined.ConfinementError):
        confined.read_bytes(root, "a/f")
    assert (outside / "f").read_bytes() == b"secret"


def test_a_symlinked_leaf_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"secret")
    root = tmp_path / "root"
    root.mkdir()
    (root / "f").symlink_to(victim)
    with pytest.raises(confined.ConfinementError):
        confined.read_bytes(root, "f")
    confined.write_bytes(root, "f", b"new")
    assert victim.read_bytes() == b"secret"
    assert not (root / "f").is_symlink() and (root / "f").read_bytes() == b"new"


def test_a_folder_is_not_a_file(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(confined.ConfinementError, match="not a regular file"):
        confined.read_bytes(tmp_path, "d")


def test_regular_files_lists_no_symlink_and_enters_no_symlinked_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "secret.py").write_text("x")
    root = tmp_path / "root"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("x")
    (root / "top.txt").write_text("x")
    (root / "pkg" / "link.py").symlink_to(outside / "deep" / "secret.py")
    (root / "linked").symlink_to(outside / "deep")
    assert confined.regular_files(root) == ["pkg/mod.py", "top.txt"]


def test_append_adds_to_the_end_and_refuses_a_symlinked_leaf(tmp_path: Path) -> None:
    confined.append_bytes(tmp_path, "a/log.jsonl", b"one\n")
    confined.append_bytes(tmp_path, "a/log.jsonl", b"two\n")
    assert (tmp_path / "a" / "log.jsonl").read_bytes() == b"one\ntwo\n"
    outside = tmp_path / "outside"
    outside.write_bytes(b"kept\n")
    (tmp_path / "a" / "link").symlink_to(outside)
    with pytest.raises(confined.ConfinementError, match="symlink"):
        confined.append_bytes(tmp_path, "a/link", b"three\n")
    assert outside.read_bytes() == b"kept\n"


def test_symlinks_lists_every_link_without_entering_one(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "inner").symlink_to("/etc")  # behind a linked folder: not listed
    root = tmp_path / "root"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("x")
    (root / "pkg" / "file").symlink_to(outside / "deep")
    (root / "dangling").symlink_to(tmp_path / "nowhere")
    (root / "folder").symlink_to(outside, target_is_directory=True)
    assert confined.symlinks(root) == ["dangling", "folder", "pkg/file"]
    assert confined.symlinks(root / "folder") == []  # a linked root is not walked
