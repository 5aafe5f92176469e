"""Plain directories snapshot into deterministic commits."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from replicate.acquire import acquire, export_tree, snapshot
from replicate.acquire.snapshot import collect_entries
from replicate.errors import ReplicateError


def _populate(root: Path) -> None:
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "core.py").write_text("def f():\n    return 1\n")
    (root / "tool.sh").write_text("#!/bin/sh\n")
    (root / "tool.sh").chmod(0o755)
    os.symlink("lib/core.py", root / "alias.py")
    for junk in ("__pycache__", ".pytest_cache", "build", "x.egg-info", ".venv", ".git"):
        (root / junk).mkdir()
        (root / junk / "junk.txt").write_text(junk)
    (root / "lib" / "core.cpython-311.pyc").write_bytes(b"\x00")


def test_same_content_same_commit_across_folders(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    a, b = tmp_path / "a" / "corpus", tmp_path / "b" / "corpus"
    _populate(a)
    _populate(b)
    one = acquire(str(a), None, cache)
    two = acquire(str(b), None, cache)
    assert one.is_plain_dir and two.is_plain_dir
    assert one.commit == two.commit
    assert one.git_dir != two.git_dir  # one snapshot repository per absolute path
    assert acquire(str(a), None, cache).commit == one.commit  # reused, same id again
    assert acquire(str(a), one.commit, cache).commit == one.commit


def test_one_byte_changes_the_commit(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    root = tmp_path / "corpus"
    _populate(root)
    before = acquire(str(root), None, cache)
    (root / "lib" / "core.py").write_text("def f():\n    return 2\n")
    after = acquire(str(root), None, cache)
    assert after.commit != before.commit
    assert after.git_dir == before.git_dir
    # the earlier snapshot stays reachable and can be pinned
    assert acquire(str(root), before.commit, cache).commit == before.commit


def test_exec_bit_changes_the_commit(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    root = tmp_path / "corpus"
    _populate(root)
    before = acquire(str(root), None, cache).commit
    (root / "tool.sh").chmod(0o644)
    assert acquire(str(root), None, cache).commit != before


def test_snapshot_commit_is_fixed(tmp_path: Path, gitcmd: Callable[..., str]) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    repo = acquire(str(root), None, tmp_path / "cache")
    header = gitcmd(repo.git_dir, "cat-file", "commit", repo.commit)
    assert "author replicate <replicate@localhost> 946684800 +0000" in header
    assert "committer replicate <replicate@localhost> 946684800 +0000" in header
    assert "parent" not in header
    # the id every machine gets: `git commit` of this one file with the same identity and date
    assert repo.commit == "65e490991d26c63f3f3ddbf6ae0e6d96a996c4c9"


def test_skipped_entries_and_export(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    _populate(root)
    paths = [e.path for e in collect_entries(root)]
    assert paths == ["alias.py", "lib/core.py", "tool.sh"]
    repo = acquire(str(root), None, tmp_path / "cache")
    out = tmp_path / "out"
    export_tree(repo, out)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == [
        "alias.py",
        "lib",
        "lib/core.py",
        "tool.sh",
    ]
    assert os.readlink(out / "alias.py") == "lib/core.py"
    assert (out / "tool.sh").stat().st_mode & 0o777 == 0o755
    assert (out / "lib" / "core.py").stat().st_mode & 0o777 == 0o644


def test_nested_build_folder_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    (root / "pkg" / "build").mkdir(parents=True)
    (root / "pkg" / "build" / "steps.py").write_text("")
    assert [e.path for e in collect_entries(root)] == ["pkg/build/steps.py"]


def test_special_files_are_left_out_and_nothing_blocks(tmp_path: Path) -> None:
    """A fifo (whose reading would wait for a writer forever), a socket: not snapshotted."""
    import socket

    root = tmp_path / "corpus"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    os.mkfifo(root / "pipe")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(root / "sock"))
        repo = acquire(str(root), None, tmp_path / "cache")
    out = tmp_path / "out"
    export_tree(repo, out)
    assert sorted(p.name for p in out.iterdir()) == ["a.py"]


def test_symlinks_out_of_the_tree_are_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "secret.py").write_text("TOKEN = 1\n")
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    os.symlink(outside, root / "escape")
    entries = collect_entries(root)
    assert [(e.path, e.mode) for e in entries] == [("a.py", "100644"), ("escape", "120000")]


def test_the_root_and_the_kernels_trees_are_refused(tmp_path: Path) -> None:
    for path in ("/", "/proc", "/proc/self", "/sys", "/dev"):
        with pytest.raises(ReplicateError, match="cannot snapshot"):
            acquire(path, None, tmp_path / "cache")


def test_a_tree_past_the_limits_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    for n in range(5):
        (root / f"m{n}.py").write_text("x = 1\n")
    assert len(collect_entries(root)) == 5  # positive control: within the limits
    monkeypatch.setattr(snapshot, "MAX_FILES", 4)
    with pytest.raises(ReplicateError, match="more than 4 files"):
        collect_entries(root)


def test_an_entry_gone_while_walking_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What /proc does under a walk: a listed entry is gone when it is looked at."""
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    (root / "gone.py").write_text("x = 2\n")
    real_lstat = Path.lstat

    def vanishing(path: Path) -> os.stat_result:
        if path.name == "gone.py":
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return real_lstat(path)

    monkeypatch.setattr(Path, "lstat", vanishing)
    assert [e.path for e in collect_entries(root)] == ["a.py"]
