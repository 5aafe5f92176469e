"""Fixtures that build small git repositories for the acquire tests."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(cwd: Path, *args: str) -> str:
    """Run git in `cwd` with a fixed identity; return stdout stripped."""
    env = {**os.environ, **IDENTITY}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def make_repo(path: Path) -> tuple[str, str]:
    """A repository with two commits changing `pkg/mod.py`; returns (first, second) commit ids."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "pkg").mkdir()
    (path / "pkg" / "mod.py").write_text("VALUE = 1\n")
    (path / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (path / "run.sh").chmod(0o755)
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "first")
    first = git(path, "rev-parse", "HEAD")
    (path / "pkg" / "mod.py").write_text("VALUE = 2\n")
    git(path, "commit", "-q", "-am", "second")
    return first, git(path, "rev-parse", "HEAD")


@pytest.fixture
def two_commit_repo(tmp_path: Path) -> tuple[Path, str, str]:
    """(path, first commit, second commit) of a fresh working-tree repository."""
    path = tmp_path / "proj"
    first, second = make_repo(path)
    return path, first, second


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    """An empty cache folder for one test."""
    return tmp_path / "cache"


@pytest.fixture
def gitcmd() -> Callable[..., str]:
    """`gitcmd(cwd, *args)` runs git with a fixed identity and returns its output."""
    return git
