"""Running git through gitpython: non-interactive, with a timeout on every call."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import BinaryIO

import git

from replicate.errors import ReplicateError

CLONE_TIMEOUT_S = 600.0
FETCH_TIMEOUT_S = 600.0
LOCAL_TIMEOUT_S = 120.0

_HEX = re.compile(r"^[0-9a-fA-F]{7,40}$")


class GitFailed(Exception):
    """A git command exited non-zero (or timed out); `line` is git's first message line."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


def git_env() -> dict[str, str]:
    """Variables that keep git from prompting for credentials or reading user configuration."""
    return {
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "",
        "SSH_ASKPASS": "",
        "GCM_INTERACTIVE": "never",
        "GIT_SSH_COMMAND": os.environ.get("GIT_SSH_COMMAND") or "ssh -o BatchMode=yes",
    }


def first_line(text: str) -> str:
    """The first meaningful line of git's output, without the `fatal:`/`error:` prefix.

    Empty when git printed nothing (as `rev-parse --verify --quiet` does for an unknown rev).
    """
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("Cloning into", "hint:", "warning:")):
            continue
        line = re.sub(r"^(?:fatal|error|remote): ", "", line).strip()
        if line:
            return line
    return ""


def run_git(
    args: list[str],
    *,
    cwd: Path | None = None,
    timeout: float = LOCAL_TIMEOUT_S,
    stdin: BinaryIO | None = None,
    extra_env: dict[str, str] | None = None,
) -> str:
    """Run `git ARGS` and return its stdout (trailing newline stripped); raise `GitFailed`.

    `cwd` is a git directory (bare repository or `.git`): it is passed as GIT_DIR, so an
    inherited GIT_DIR cannot redirect the command and no ownership (safe.directory) check applies.
    """
    env = git_env()
    if cwd is not None:
        env["GIT_DIR"] = str(cwd)
    if extra_env:
        env.update(extra_env)
    runner = git.Git(str(cwd) if cwd is not None else None)
    try:
        status, out, err = runner.execute(
            ["git", *args],
            istream=stdin,
            with_extended_output=True,
            with_exceptions=False,
            kill_after_timeout=timeout,
            env=env,
        )
    except git.GitCommandNotFound as exc:
        raise ReplicateError("git is not installed (the `git` program was not found)") from exc
    if status != 0:
        if "did not complete in" in err:
            raise GitFailed(f"timed out after {timeout:g} s")
        raise GitFailed(first_line(err))
    return out


def looks_like_sha(rev: str) -> bool:
    """True for 7..40 hex digits (an abbreviated or full commit id)."""
    return bool(_HEX.match(rev))


def resolve_commit(git_dir: Path, rev: str) -> str | None:
    """The full 40-hex id of commit `rev` in the repository at `git_dir`, or None if unknown."""
    if not rev or rev.startswith("-") or "\n" in rev:
        return None
    try:
        out = run_git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], cwd=git_dir)
    except GitFailed as exc:
        if exc.line:  # git said something: the repository itself is unreadable
            raise ReplicateError(f"cannot read repository {git_dir}: {exc.line}") from exc
        return None
    sha = out.strip()
    return sha if re.fullmatch(r"[0-9a-f]{40}", sha) else None
