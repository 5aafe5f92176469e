"""acquire(): local repositories, bare repositories, remote clones and the one-line errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from replicate.acquire import acquire, export_tree
from replicate.acquire import remote as remote_module
from replicate.acquire.remote import redact
from replicate.errors import ReplicateError


def test_local_repo_pins_first_commit_and_export_has_old_content(
    two_commit_repo: tuple[Path, str, str], cache: Path, tmp_path: Path
) -> None:
    path, first, second = two_commit_repo
    head = acquire(str(path), None, cache)
    assert head.commit == second
    assert head.key == "proj"
    assert head.url == str(path.resolve())
    assert head.is_plain_dir is False
    assert head.git_dir == (path / ".git").resolve()
    assert not (cache / "clones").exists()  # read in place, not copied

    pinned = acquire(str(path), first[:8], cache)
    assert pinned.commit == first
    assert acquire(str(path), "HEAD~1", cache).commit == first

    export_tree(pinned, tmp_path / "old")
    assert (tmp_path / "old" / "pkg" / "mod.py").read_text() == "VALUE = 1\n"
    assert (tmp_path / "old" / "run.sh").stat().st_mode & 0o777 == 0o755
    assert not (tmp_path / "old" / ".git").exists()


def test_bare_repository_is_read_in_place(
    two_commit_repo: tuple[Path, str, str],
    cache: Path,
    tmp_path: Path,
    gitcmd: Callable[..., str],
) -> None:
    path, first, second = two_commit_repo
    bare = tmp_path / "proj-bare.git"
    gitcmd(tmp_path, "clone", "-q", "--bare", str(path), str(bare))
    repo = acquire(str(bare), None, cache)
    assert repo.commit == second
    assert repo.git_dir == bare.resolve()
    assert repo.key == "proj-bare.git"
    assert acquire(str(bare), "main~1", cache).commit == first


def test_remote_file_url_is_cloned_once_and_reused(
    two_commit_repo: tuple[Path, str, str],
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path, first, second = two_commit_repo
    calls: list[str] = []
    real_clone = remote_module.clone_bare

    def counting_clone(url: str, dest: Path) -> None:
        calls.append(url)
        real_clone(url, dest)

    monkeypatch.setattr(remote_module, "clone_bare", counting_clone)
    url = f"file://{path}"
    one = acquire(url, None, cache)
    two = acquire(url, first, cache)
    assert calls == [url]
    assert one.commit == second and two.commit == first
    assert one.key == str(path).strip("/")
    assert one.url == url
    assert one.git_dir == two.git_dir
    assert one.git_dir.parent == cache / "clones"
    assert (one.git_dir / "HEAD").is_file()


def test_remote_fetches_a_commit_missing_from_the_cached_clone(
    two_commit_repo: tuple[Path, str, str],
    cache: Path,
    gitcmd: Callable[..., str],
    tmp_path: Path,
) -> None:
    path, _, second = two_commit_repo
    url = f"file://{path}"
    assert acquire(url, None, cache).commit == second
    (path / "pkg" / "mod.py").write_text("VALUE = 3\n")
    gitcmd(path, "commit", "-q", "-am", "third")
    third = gitcmd(path, "rev-parse", "HEAD")
    repo = acquire(url, third, cache)
    assert repo.commit == third
    export_tree(repo, tmp_path / "out")
    assert (tmp_path / "out" / "pkg" / "mod.py").read_text() == "VALUE = 3\n"


def _one_line_error(spec: str, commit: str | None, cache: Path) -> str:
    with pytest.raises(ReplicateError) as info:
        acquire(spec, commit, cache)
    message = str(info.value)
    assert "\n" not in message
    assert "Traceback" not in message
    return message


def test_uncloneable_url_is_one_line(tmp_path: Path, cache: Path) -> None:
    message = _one_line_error(f"file://{tmp_path}/missing-repo", None, cache)
    assert message.startswith(f"cannot clone file://{tmp_path}/missing-repo: ")
    assert "does not appear to be a git repository" in message
    assert not list((cache / "clones").glob("*.tmp-*"))  # the staging folder is cleaned up


def test_https_url_fails_fast_without_prompting(cache: Path) -> None:
    message = _one_line_error("https://127.0.0.1:1/owner/repo.git", None, cache)
    assert message.startswith("cannot clone https://127.0.0.1:1/owner/repo.git: ")


def test_nonexistent_path(tmp_path: Path, cache: Path) -> None:
    missing = str(tmp_path / "nope")
    assert _one_line_error(missing, None, cache) == f"no such repository or directory: {missing}"


def test_unknown_commit(two_commit_repo: tuple[Path, str, str], cache: Path) -> None:
    path, _, _ = two_commit_repo
    assert _one_line_error(str(path), "nosuchrev", cache) == f"commit nosuchrev not found in {path}"
    assert "not found" in _one_line_error(str(path), "--all", cache)


def test_unknown_commit_in_remote(two_commit_repo: tuple[Path, str, str], cache: Path) -> None:
    path, _, _ = two_commit_repo
    message = _one_line_error(f"file://{path}", "0" * 40, cache)
    assert message == f"commit {'0' * 40} not found in file://{path}"


def test_empty_directory_and_empty_repository(
    tmp_path: Path, cache: Path, gitcmd: Callable[..., str]
) -> None:
    empty = tmp_path / "empty"
    (empty / "__pycache__").mkdir(parents=True)
    (empty / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert _one_line_error(str(empty), None, cache) == f"{empty} is empty"
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    gitcmd(fresh, "init", "-q")
    assert "no commits" in _one_line_error(str(fresh), None, cache)


def test_file_is_not_a_directory(tmp_path: Path, cache: Path) -> None:
    (tmp_path / "f.txt").write_text("x")
    assert _one_line_error(str(tmp_path / "f.txt"), None, cache).startswith("not a directory")


def test_folder_inside_a_repository_is_a_plain_directory(
    two_commit_repo: tuple[Path, str, str], cache: Path
) -> None:
    path, _, _ = two_commit_repo
    repo = acquire(str(path / "pkg"), None, cache)
    assert repo.is_plain_dir is True
    assert repo.key == "pkg"
    assert repo.git_dir.parent == cache / "snapshots"


def test_redact_hides_passwords() -> None:
    assert (
        redact("https://user:secret@example.com/a/b.git") == "https://user:***@example.com/a/b.git"
    )
    assert redact("git@github.com:a/b") == "git@github.com:a/b"
