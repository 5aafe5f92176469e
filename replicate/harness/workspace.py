"""The agent's workspace: the pristine tree with only the target's body stubbed, plus TASK.md.

It is a fresh git repository with a single commit of that state, so `git diff` shows the agent's
work and no history holds the original.  Reading the agent's result back never follows a symlink.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

import git

from replicate.batch.store import LoadedTask
from replicate.verifiers.grader import stubbed_source

PROMPT_NAME = "TASK.md"
MAX_TARGET_BYTES = 2_000_000
_IDENTITY = {
    "GIT_AUTHOR_NAME": "replicate",
    "GIT_AUTHOR_EMAIL": "replicate@localhost",
    "GIT_COMMITTER_NAME": "replicate",
    "GIT_COMMITTER_EMAIL": "replicate@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+00:00",
}


def make_workspace(task: LoadedTask, dest: Path) -> Path:
    """Create the workspace at `dest` (absent, or an empty folder: the quota's mount) and
    return it."""
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"workspace folder is not empty: {dest}")
    shutil.copytree(task.repo.tree, dest, symlinks=True, dirs_exist_ok=True)
    target = dest / task.hidden.target.path
    target.unlink()
    target.write_bytes(stubbed_source(task))
    (dest / PROMPT_NAME).write_text(task.prompt, encoding="utf-8")
    repo = git.Repo.init(dest, initial_branch="main")
    with repo.git.custom_environment(**_IDENTITY):
        repo.git.add("-A", "--force")
        repo.git.commit("-q", "--no-verify", "--no-gpg-sign", "-m", "task workspace")
    return dest


@dataclass(frozen=True)
class TargetRead:
    text: str | None
    violation: str | None = None
    problem: str | None = None


def read_target(workspace: Path, relpath: str) -> TargetRead:
    """Read the target file without following any symlink on the way (catalogue item 13)."""
    parts = [p for p in relpath.split("/") if p]
    try:
        fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        return TargetRead(None, problem=f"workspace is gone: {exc.strerror}")
    part = ""
    try:
        for part in parts[:-1]:
            next_fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = next_fd
        part = parts[-1]
        leaf = os.open(part, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(part, fd):
            return TargetRead(None, violation=f"{relpath} is reached through a symlink")
        return TargetRead(None, problem=f"target file missing or unreadable: {exc.strerror}")
    finally:
        os.close(fd)
    return _read_regular(leaf, relpath)


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _read_regular(fd: int, relpath: str) -> TargetRead:
    try:
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return TargetRead(None, violation=f"{relpath} is not a regular file")
            data = handle.read(MAX_TARGET_BYTES + 1)
    except OSError as exc:
        return TargetRead(None, problem=f"cannot read target: {exc.strerror}")
    if len(data) > MAX_TARGET_BYTES:
        return TargetRead(None, problem=f"target file larger than {MAX_TARGET_BYTES} bytes")
    try:
        return TargetRead(data.decode("utf-8"))
    except UnicodeDecodeError:
        return TargetRead(None, problem="target file is not UTF-8 text")
