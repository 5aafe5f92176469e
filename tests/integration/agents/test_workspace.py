"""The agent's workspace: stubbed tree, TASK.md, one commit, no trace of the original; reading the
target back without following symlinks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from replicate.agents.workspace import PROMPT_NAME, make_workspace, read_target
from replicate.core import MAX_CANDIDATE_BYTES as MAX_TARGET_BYTES
from replicate.grading.grader import original_source, stubbed_source
from tests.integration.minted import CORE_PATH, Tiny


def _git(ws: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", f"safe.directory={ws}", *args],
        cwd=ws,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.fixture(scope="module")
def workspace(tiny: Tiny, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_workspace(tiny.task("tinypkg.core.clamp"), tmp_path_factory.mktemp("ws") / "ws")


def test_workspace_is_the_tree_with_the_body_stubbed(tiny: Tiny, workspace: Path) -> None:
    task = tiny.task("tinypkg.core.clamp")
    assert (workspace / CORE_PATH).read_bytes() == stubbed_source(task)
    assert (workspace / PROMPT_NAME).read_text() == task.prompt
    assert (workspace / "tests" / "test_core.py").read_bytes() == (
        task.repo.tree / "tests" / "test_core.py"
    ).read_bytes()
    assert (workspace / "src" / "tinypkg" / "__init__.py").is_file()


def test_workspace_has_exactly_one_commit_and_a_clean_status(workspace: Path) -> None:
    assert _git(workspace, "log", "--all", "--format=%H %an %s").splitlines() == [
        _git(workspace, "rev-parse", "HEAD").strip() + " replicate task workspace"
    ]
    assert _git(workspace, "status", "--porcelain") == ""
    assert _git(workspace, "stash", "list") == ""
    assert "src/tinypkg/core.py" in _git(workspace, "ls-files").splitlines()


def test_no_git_object_holds_the_original(tiny: Tiny, workspace: Path) -> None:
    original = original_source(tiny.task("tinypkg.core.clamp"))
    listing = _git(workspace, "cat-file", "--batch-all-objects", "--batch-check")
    blobs = [line.split()[0] for line in listing.splitlines() if line.split()[1] == "blob"]
    assert len(blobs) >= 4
    contents = [
        subprocess.run(
            ["git", "-c", f"safe.directory={workspace}", "cat-file", "blob", blob],
            cwd=workspace,
            capture_output=True,
            check=True,
        ).stdout
        for blob in blobs
    ]
    assert original not in contents
    assert not any(b"return low" in c for c in contents)
    assert stubbed_source(tiny.task("tinypkg.core.clamp")) in contents


def test_workspace_of_a_method_stubs_only_that_method(tiny: Tiny, tmp_path: Path) -> None:
    task = tiny.task("tinypkg.core.Counter.add")
    ws = make_workspace(task, tmp_path / "ws")
    text = (ws / CORE_PATH).read_text()
    assert "self.total += amount" not in text
    assert "self.total = start" in text and "return low" in text


def test_read_target_regular_file(workspace: Path) -> None:
    read = read_target(workspace, CORE_PATH)
    assert read.text == (workspace / CORE_PATH).read_text()
    assert read.violation is None and read.problem is None


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    return tmp_path


def test_symlinked_target_file_is_a_violation(
    ws: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside") / "secret.py"
    outside.write_text("SECRET = 1\n")
    (ws / "src" / "pkg" / "mod.py").symlink_to(outside)
    read = read_target(ws, "src/pkg/mod.py")
    assert read.text is None and read.violation is not None and "symlink" in read.violation


def test_symlinked_parent_directory_is_a_violation(
    ws: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (outside / "mod.py").write_text("x = 1\n")
    (ws / "src" / "pkg").rmdir()
    (ws / "src" / "pkg").symlink_to(outside, target_is_directory=True)
    read = read_target(ws, "src/pkg/mod.py")
    assert read.text is None and read.violation is not None


def test_fifo_is_not_a_regular_file(ws: Path) -> None:
    os.mkfifo(ws / "src" / "pkg" / "mod.py")
    read = read_target(ws, "src/pkg/mod.py")  # must not block
    assert read.text is None and read.violation is not None and "regular" in read.violation


def test_directory_in_place_of_the_file(ws: Path) -> None:
    (ws / "src" / "pkg" / "mod.py").mkdir()
    read = read_target(ws, "src/pkg/mod.py")
    assert read.text is None and (read.violation or read.problem)


def test_missing_file_is_a_problem(ws: Path) -> None:
    read = read_target(ws, "src/pkg/mod.py")
    assert read.text is None and read.violation is None
    assert read.problem is not None and "missing" in read.problem


def test_missing_workspace_is_a_problem(tmp_path: Path) -> None:
    read = read_target(tmp_path / "gone", "mod.py")
    assert read.text is None and read.problem is not None and "gone" in read.problem


def test_non_utf8_file_is_a_problem(ws: Path) -> None:
    (ws / "src" / "pkg" / "mod.py").write_bytes(b"x = '\xff\xfe'\n")
    read = read_target(ws, "src/pkg/mod.py")
    assert read.text is None and read.violation is None and read.problem is not None
    assert "UTF-8" in read.problem


def test_huge_file_is_a_problem(ws: Path) -> None:
    (ws / "src" / "pkg" / "mod.py").write_bytes(b"#" * (MAX_TARGET_BYTES + 1))
    read = read_target(ws, "src/pkg/mod.py")
    assert read.text is None and read.problem is not None and "larger than" in read.problem


def test_file_of_exactly_the_limit_is_read(ws: Path) -> None:
    (ws / "src" / "pkg" / "mod.py").write_bytes(b"#" * MAX_TARGET_BYTES)
    read = read_target(ws, "src/pkg/mod.py")
    assert read.text is not None and len(read.text) == MAX_TARGET_BYTES


def test_a_file_where_a_folder_should_be_is_a_problem_not_a_violation(tmp_path: Path) -> None:
    (tmp_path / "pkg").write_text("not a folder", encoding="utf-8")
    read = read_target(tmp_path, "pkg/mod.py")
    assert read.violation is None and read.problem is not None
