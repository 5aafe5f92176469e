"""The agent's workspace: the pristine tree with only the target's body stubbed, plus TASK.md.

It is a fresh git repository with a single commit of that state, so `git diff` shows the agent's
work and no history holds the original.  Every file written into it or read back from it goes
through `replicate.confined`: no path from the batch and no symlink the agent planted leads out.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import git

from replicate import confined
from replicate.agents.workspace_git import DATE, EMAIL, MESSAGE, NAME, write_repository
from replicate.batch import LoadedTask
from replicate.core import MAX_CANDIDATE_BYTES

PROMPT_NAME = "TASK.md"
_IDENTITY = {  # the commit `workspace_git` writes, when git makes it
    f"GIT_{role}_{part}": value
    for role in ("AUTHOR", "COMMITTER")
    for part, value in (("NAME", NAME), ("EMAIL", EMAIL), ("DATE", DATE))
}


def make_workspace(task: LoadedTask, dest: Path) -> Path:
    """Create the workspace at `dest` (absent, or an empty folder: the quota's mount) and
    return it."""
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"workspace folder is not empty: {dest}")
    shutil.copytree(task.repo.tree, dest, symlinks=True, dirs_exist_ok=True)
    confined.write_bytes(dest, task.hidden.target.path, task.stubbed_source())
    confined.write_bytes(dest, PROMPT_NAME, task.prompt.encode("utf-8"))
    if not write_repository(dest):  # the plain case, without three git processes
        commit_with_git(dest)
    return dest


def commit_with_git(dest: Path) -> None:
    """Make `dest` a repository with one commit of everything in it, by git itself."""
    repo = git.Repo.init(dest, initial_branch="main")
    with repo.git.custom_environment(**_IDENTITY):
        repo.git.add("-A", "--force")
        repo.git.commit("-q", "--no-verify", "--no-gpg-sign", "-m", MESSAGE)


@dataclass(frozen=True)
class TargetRead:
    text: str | None
    violation: str | None = None
    problem: str | None = None


def read_target(workspace: Path, relpath: str) -> TargetRead:
    """Read the target file without following any symlink on the way (catalogue item 13)."""
    if not workspace.is_dir():
        return TargetRead(None, problem="workspace is gone")
    try:
        fd = confined.open_file(workspace, relpath)
    except confined.ConfinementError as exc:  # a symlink on the way, or not a regular file
        return TargetRead(None, violation=str(exc))
    except OSError as exc:
        return TargetRead(None, problem=f"target file missing or unreadable: {exc.strerror}")
    try:
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_CANDIDATE_BYTES + 1)
    except OSError as exc:
        return TargetRead(None, problem=f"cannot read target: {exc.strerror}")
    if len(data) > MAX_CANDIDATE_BYTES:
        return TargetRead(None, problem=f"target file larger than {MAX_CANDIDATE_BYTES} bytes")
    try:
        return TargetRead(data.decode("utf-8"))
    except UnicodeDecodeError:
        return TargetRead(None, problem="target file is not UTF-8 text")
