"""The workspace's repository written directly (`agents/workspace_git.py`) is the one git makes:
the same commit id, a clean `git status`, a `git fsck --strict` without complaint, and `git diff`
showing an edit, on the bundled task's tree and on a tree with the cases git orders and marks
specially (a folder beside a file whose name sorts between, executables, symlinks, unicode, an
empty file and folder).  What it does not write (`.gitattributes`, a nested `.git`) is left to
git, with nothing half made."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from replicate.agents import workspace as workspace_module
from replicate.agents.workspace import commit_with_git, make_workspace
from replicate.agents.workspace_git import write_repository
from replicate.batch import Batch

ROOT = Path(__file__).resolve().parents[3]


def _git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def _tricky(folder: Path) -> Path:
    (folder / "a").mkdir(parents=True)
    (folder / "a" / "inner.py").write_text("x = 1\n")
    (folder / "a.b").write_text("dot\n")  # "a.b" < "a/" < "a0": the tree's order is git's
    (folder / "a0").write_text("zero\n")
    (folder / "a-b").write_text("dash\n")
    (folder / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (folder / "run.sh").chmod(0o755)
    (folder / "link.py").symlink_to("a/inner.py")
    (folder / "alias").symlink_to("a")  # a symlink to a folder is a link, not a folder
    (folder / "é.py").write_text("é = 1\n", encoding="utf-8")
    (folder / "empty.txt").write_bytes(b"")
    (folder / "nothing").mkdir()  # git keeps no empty folder
    (folder / "deep" / "er").mkdir(parents=True)
    (folder / "deep" / "er" / "f.txt").write_text("deep\n")
    return folder


def _both(source: Path, tmp_path: Path) -> tuple[Path, Path]:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    shutil.copytree(source, ours, symlinks=True)
    shutil.copytree(source, theirs, symlinks=True)
    assert write_repository(ours)
    commit_with_git(theirs)
    return ours, theirs


def _same_repository(ours: Path, theirs: Path) -> None:
    assert _git(ours, "rev-parse", "HEAD") == _git(theirs, "rev-parse", "HEAD")
    assert _git(ours, "status", "--porcelain", "--ignored") == ""
    _git(ours, "fsck", "--strict", "--no-dangling")
    assert _git(ours, "ls-files", "-s") == _git(theirs, "ls-files", "-s")
    assert _git(ours, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"


def test_a_tree_with_every_special_case_gets_gits_own_commit(tmp_path: Path) -> None:
    ours, theirs = _both(_tricky(tmp_path / "tree"), tmp_path)
    _same_repository(ours, theirs)
    (ours / "a" / "inner.py").write_text("x = 2\n")
    assert "+x = 2" in _git(ours, "diff")


def test_the_bundled_tasks_workspace_gets_gits_own_commit(tmp_path: Path) -> None:
    batch = Batch.open(ROOT)
    task = batch.load(batch.select((), 1)[0])

    def no_git(dest: Path) -> None:
        raise AssertionError("git was run for a plain tree")

    with pytest.MonkeyPatch.context() as patches:
        patches.setattr(workspace_module, "commit_with_git", no_git)
        ours = make_workspace(task, tmp_path / "ours")
    theirs = tmp_path / "theirs"
    shutil.copytree(ours, theirs, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    commit_with_git(theirs)
    _same_repository(ours, theirs)
    target = ours / task.hidden.target.path
    target.write_text(target.read_text() + "\n# edited\n")
    assert "+# edited" in _git(ours, "diff")


@pytest.mark.parametrize("extra", [".gitattributes", "sub/.git"])
def test_what_git_would_treat_specially_is_left_to_git(tmp_path: Path, extra: str) -> None:
    tree = _tricky(tmp_path / "tree")
    (tree / extra).parent.mkdir(parents=True, exist_ok=True)
    (tree / extra).write_text("* text=auto\n" if extra.endswith("attributes") else "gitdir: x\n")
    assert not write_repository(tree)
    assert not (tree / ".git").exists()  # nothing half made
    assert not os.path.exists(tree / ".git" / "index")
