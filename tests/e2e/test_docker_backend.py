"""`--sandbox docker` end to end on the committed sample batch (read only): the original file
grades 1.0, an agent that does nothing earns 0.0, and one that restores the original through the
writable workspace earns 1.0 again."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from replicate.sandbox import SandboxUnavailable, get_sandbox
from tests.e2e.conftest import REPO_ROOT, replicate


@pytest.fixture(scope="module", autouse=True)
def docker_available() -> None:
    try:
        get_sandbox("docker")
    except SandboxUnavailable as exc:
        required = os.environ.get("REPLICATE_REQUIRE_SANDBOXES", "").split(",")
        if "docker" in required:
            pytest.fail(f"required sandbox docker is unavailable: {exc}")
        pytest.skip(f"docker unavailable: {exc}")


@pytest.fixture(scope="module")
def task() -> tuple[str, Path]:
    """The first task of the committed batch and the original file of its target."""
    spec = sorted((REPO_ROOT / "specs").glob("*/task.json"))[0]
    document = json.loads(spec.read_text(encoding="utf-8"))
    originals = list((REPO_ROOT / "reference_impls" / "_repos").glob("*/tree"))
    original = next(t / document["source"]["path"] for t in originals)
    assert original.is_file()
    return document["id"], original


def rows(out: Path) -> list[dict[str, object]]:
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_the_original_grades_one(task: tuple[str, Path]) -> None:
    task_id, original = task
    done = replicate(
        "grade", "--tasks", str(REPO_ROOT), "--task", task_id,
        "--candidate", str(original), "--sandbox", "docker",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    verdict = json.loads(done.stdout)
    assert (verdict["status"], verdict["reward"]) == ("graded", 1.0), verdict


def test_an_idle_agent_earns_zero(task: tuple[str, Path], tmp_path: Path) -> None:
    task_id, _ = task
    done = replicate(
        "run", "--tasks", str(REPO_ROOT), "--task", task_id, "--agent", "true",
        "--sandbox", "docker", "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (row,) = rows(tmp_path / "run")
    assert (row["status"], row["reward"], row["agent_status"]) == ("graded", 0.0, "ok"), row


def test_an_agent_writing_the_workspace_is_graded(task: tuple[str, Path], tmp_path: Path) -> None:
    task_id, original = task
    copy = f'cp {original} "$REPLICATE_WORKSPACE/$REPLICATE_TARGET_FILE"'
    done = replicate(
        "run", "--tasks", str(REPO_ROOT), "--task", task_id, "--agent", copy,
        "--mount", str(original.parent), "--sandbox", "docker", "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (row,) = rows(tmp_path / "run")
    assert (row["status"], row["reward"], row["agent_status"]) == ("graded", 1.0, "ok"), row
