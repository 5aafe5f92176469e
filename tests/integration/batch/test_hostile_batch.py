"""A hostile batch: every attack a batch could make on the host, each with its positive control.

A batch is untrusted input.  Each test edits a copy of the tiny batch the way an attacker would,
first shows what the edit reaches when a path is joined naively (the code before confinement),
then runs the real CLI and checks the one-line refusal and that the file the attack aimed at is
unchanged.  The edits are made with `--no-verify` runs too: the manifest is one defence, the
confinement of every path another, and each must hold without the other.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from replicate.batch.manifest import MANIFEST, write_manifest
from replicate.batch.store import HIDDEN, REPOS, SPECS
from replicate.cli.main import main
from tests.integration.minted import Tiny, run_cli

CLAMP = "tinypkg.core.clamp"
SECRET = b"the user's own file\n"


def _edit_json(path: Path, change: dict[str, object], where: str | None = None) -> None:
    data = json.loads(path.read_text())
    (data[where] if where else data).update(change)
    path.write_text(json.dumps(data))


def _naive_write(root: Path, relpath: str, data: bytes) -> None:
    """How the workspace and the plain jail wrote the target file before confinement."""
    (root / relpath).unlink()
    (root / relpath).write_bytes(data)


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "home" / "victim.py"
    path.parent.mkdir()
    path.write_bytes(SECRET)
    return path


def _climb_to(victim: Path, base: Path) -> str:
    """A relative path from `base` (a folder inside the batch) that climbs out to `victim`."""
    return os.path.relpath(victim, base)


@pytest.mark.parametrize("how", ["climbing", "absolute"])
@pytest.mark.parametrize("command", ["run", "grade"])
def test_a_target_path_outside_the_snapshot_is_refused(
    tiny: Tiny, tmp_path: Path, victim: Path, how: str, command: str
) -> None:
    batch = tiny.copy_batch(tmp_path / "batch")
    ident = tiny.id_of(CLAMP)
    hidden = json.loads((batch / HIDDEN / ident / "task.json").read_text())
    workspace = tmp_path / "run" / "workspaces" / f"{ident}.0"
    path = str(victim) if how == "absolute" else _climb_to(victim, workspace)
    # The control: the naive join of that path onto the workspace reaches the user's file.
    assert (workspace / path).resolve() == victim.resolve()
    copy = tmp_path / "home" / "copy.py"  # the naive write, aimed at a copy of the victim
    copy.write_bytes(SECRET)
    workspace.mkdir(parents=True)
    _naive_write(workspace, path.replace("victim.py", "copy.py"), b"planted")
    assert copy.read_bytes() == b"planted"

    for field in ("target", "source"):
        hidden[field]["path"] = path
    (batch / HIDDEN / ident / "task.json").write_text(json.dumps(hidden))
    _edit_json(batch / SPECS / ident / "task.json", {"path": path}, "source")
    candidate = tmp_path / "candidate.py"
    candidate.write_text("def clamp(value, low, high):\n    return value\n")
    args = {
        "run": ["run", "--tasks", str(batch), "--agent", "true", "--out", str(tmp_path / "run")],
        "grade": ["grade", "--tasks", str(batch), "--task", ident, "--candidate", str(candidate)],
    }[command]
    done = run_cli(*args, "--sandbox", "plain", "--no-verify")
    assert done.returncode == 2, done.stderr
    assert "unsafe target.path" in done.stderr and ident in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert victim.read_bytes() == SECRET


def test_a_target_reached_through_a_symlink_in_the_snapshot_is_refused(
    tiny: Tiny, tmp_path: Path, victim: Path
) -> None:
    batch = tiny.copy_batch(tmp_path / "batch")
    task = tiny.task(CLAMP)
    tree = batch / HIDDEN / REPOS / task.hidden.repo_dir / "tree"
    package = tree / Path(task.hidden.target.path).parent
    outside = tmp_path / "home"
    (outside / Path(task.hidden.target.path).name).write_bytes(SECRET)
    shutil.rmtree(package)
    package.symlink_to(outside)
    # The control: the naive path through the link reaches the outside folder.
    assert (tree / task.hidden.target.path).read_bytes() == SECRET
    done = run_cli(
        "run", "--tasks", str(batch), "--agent", "true", "--out", str(tmp_path / "run"),
        "--sandbox", "plain", "--no-verify",
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"{Path(task.hidden.target.path).parent} is a symlink that leads out" in done.stderr
    assert (outside / Path(task.hidden.target.path).name).read_bytes() == SECRET


def test_a_task_id_that_climbs_out_of_the_run_dir_is_refused(tiny: Tiny, tmp_path: Path) -> None:
    batch = tiny.copy_batch(tmp_path / "batch")
    ident = tiny.id_of(CLAMP)
    evil = "../../escaped"
    out = tmp_path / "run"
    # The control: the candidate's naive path lands outside RUN_DIR.
    assert not (out / "candidates" / evil / "0.py").resolve().is_relative_to(out)
    _edit_json(batch / SPECS / ident / "task.json", {"id": evil})
    _edit_json(batch / HIDDEN / ident / "task.json", {"id": evil})
    for args in (
        ["run", "--tasks", str(batch), "--agent", "true", "--out", str(out)],
        ["grade", "--tasks", str(batch), "--task", ident, "--candidate", __file__],
    ):
        done = run_cli(*args, "--sandbox", "plain", "--no-verify")
        assert done.returncode == 2 and "unsafe specs task.json id" in done.stderr, done.stderr
        assert "{" not in done.stdout  # no verdict that echoes the id
    assert not (tmp_path / "escaped").exists()


def test_a_lock_line_that_is_a_pip_option_is_refused(tiny: Tiny, tmp_path: Path) -> None:
    batch = tiny.copy_batch(tmp_path / "batch")
    repo_json = next((batch / HIDDEN / REPOS).glob("*/repo.json"))
    data = json.loads(repo_json.read_text())
    data["lock"] = [*data["lock"], "--index-url=http://127.0.0.1:9/simple"]
    repo_json.write_text(json.dumps(data))
    done = run_cli("validate", "--tasks", str(batch), "--no-verify", "--json")
    assert done.returncode == 2
    problems = [t["problem"] for t in json.loads(done.stdout)["tasks"]]
    assert all(p and "unsafe lock line" in p for p in problems), problems


def test_an_edited_batch_is_refused_and_validate_names_the_file(tiny: Tiny, tmp_path: Path) -> None:
    batch = tiny.copy_batch(tmp_path / "batch")
    ident = tiny.id_of(CLAMP)
    clean = run_cli("validate", "--tasks", str(batch))
    assert clean.returncode == 0 and "4 of 4 tasks valid" in clean.stderr, clean.stderr
    expected = batch / HIDDEN / ident / "expected.jsonl"
    expected.write_text(expected.read_text().replace('"returned"', '"raised"', 1))
    candidate = tmp_path / "c.py"
    candidate.write_text("def clamp(value, low, high):\n    return value\n")
    grade = ["grade", "--tasks", str(batch), "--task", ident, "--candidate", str(candidate)]
    done = run_cli(*grade, "--sandbox", "plain")
    assert done.returncode == 2 and "changed after minting" in done.stderr, done.stderr
    trusted = run_cli(*grade, "--sandbox", "plain", "--no-verify")  # the control: it loads
    assert trusted.returncode == 0 and json.loads(trusted.stdout)["task_id"] == ident
    found = run_cli("validate", "--tasks", str(batch), "--json")
    assert found.returncode == 2
    payload = json.loads(found.stdout)
    changed = f"{HIDDEN}/{ident}/expected.jsonl changed after minting"
    assert payload["manifest_problems"] == [changed]
    refused = [t for t in payload["tasks"] if t["problem"]]
    assert [t["task_id"] for t in refused] == [ident]


def test_a_task_added_after_minting_is_refused(tiny: Tiny, tmp_path: Path) -> None:
    batch = tiny.copy_batch(tmp_path / "batch")
    ident = tiny.id_of(CLAMP)
    twin = ident.rsplit("__", 1)[0] + "__0123456789"
    (batch / SPECS / twin).mkdir()
    (batch / SPECS / twin / "task.json").write_text("{}")
    done = run_cli("validate", "--tasks", str(batch))
    assert done.returncode == 2
    done = run_cli("run", "--tasks", str(batch), "--agent", "true", "--out", str(tmp_path / "r"))
    assert done.returncode == 2 and f"task {twin} was added" in done.stderr, done.stderr


def test_a_batch_without_manifest_is_refused_unless_trusted(tiny: Tiny, tmp_path: Path) -> None:
    batch = tiny.copy_batch(tmp_path / "batch")
    (batch / MANIFEST).unlink()
    done = run_cli("validate", "--tasks", str(batch))
    assert done.returncode == 2 and "no manifest" in done.stderr
    assert run_cli("validate", "--tasks", str(batch), "--no-verify").returncode == 0
    write_manifest(batch)
    assert run_cli("validate", "--tasks", str(batch)).returncode == 0


def test_an_oversized_candidate_is_refused_at_once(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    candidate = tmp_path / "huge.py"
    with candidate.open("w") as handle:
        for _ in range(50):  # 50 MB of statements
            handle.write("x = 1\n" * 175_000)
    started = time.monotonic()
    code = main(
        ["grade", "--tasks", str(tiny.batch_dir), "--task", CLAMP, "--candidate", str(candidate)]
    )
    elapsed = time.monotonic() - started
    verdict = json.loads(capsys.readouterr().out)
    assert code == 0 and verdict["reward"] == 0.0 and verdict["status"] == "graded"
    assert "candidate larger than 2000000 bytes" in verdict["reason"]
    assert elapsed < 1.0, f"refusing took {elapsed:.2f} s"
