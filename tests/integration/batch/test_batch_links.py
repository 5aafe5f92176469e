"""A symlink planted in a batch is refused, with or without `--no-verify`.

`specs/<id>/TASK.md` replaced by a link to a file of the host's (or `specs/<id>` itself a link to
a folder of the host's) put that file into every place the prompt goes: the exported rows, the
inspect samples and workspaces, Harbor's instruction.md, the agent's TASK.md.  Each test first
shows the leak with the loader's link checks taken out (the positive control, in process), then
runs the real CLI and checks the one-line refusal that names the link.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from replicate import confined
from replicate.batch import links, store
from replicate.batch.store import HIDDEN, REPOS, SPECS
from replicate.cli.main import main
from tests.integration.minted import Tiny, run_cli, write_files

CLAMP = "tinypkg.core.clamp"
SECRET = "the user's own secret: 7f3a9c\n"


def _naive_read(root: Path, relpath: str, task_id: str) -> str:
    """How the loader read a batch file before: following every symlink."""
    return (root / relpath).read_text(encoding="utf-8")


def _checks_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "_read", _naive_read)
    monkeypatch.setattr(store.Batch, "_refuse_links", lambda self, *args, **kwargs: None)
    monkeypatch.setattr(links, "refuse_top_links", lambda root: None)


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file of the host's user, outside the batch."""
    return write_files(tmp_path / "home", {"notes.txt": SECRET}) / "notes.txt"


def _link_prompt(tiny: Tiny, batch: Path, victim: Path) -> str:
    """TASK.md of clamp's task replaced by a link to the victim; the link's batch path."""
    prompt = batch / SPECS / tiny.id_of(CLAMP) / "TASK.md"
    prompt.unlink()
    prompt.symlink_to(victim)
    return f"{SPECS}/{tiny.id_of(CLAMP)}/TASK.md"


def _link_folder(tiny: Tiny, batch: Path, victim: Path) -> str:
    """specs/<id> a link to a folder of the host's that holds a task.json and, as TASK.md, the
    victim's file."""
    ident = tiny.id_of(CLAMP)
    elsewhere = victim.parent / "folder"
    shutil.move(batch / SPECS / ident, elsewhere)
    (elsewhere / "TASK.md").unlink()
    (elsewhere / "TASK.md").symlink_to(victim)
    (batch / SPECS / ident).symlink_to(elsewhere, target_is_directory=True)
    return f"{SPECS}/{ident}"


Plant = Callable[[Tiny, Path, Path], str]


def _refused(done: subprocess.CompletedProcess[str], named: str) -> None:
    stderr = done.stderr
    assert done.returncode == 2, stderr
    assert named in stderr and "symlink" in stderr and "Traceback" not in stderr, stderr
    assert len(stderr.strip().splitlines()) == 1, stderr


def _export_text(out: Path, how: str) -> str:
    if how == "rows":
        return out.with_suffix(".jsonl").read_text()
    return "".join(
        p.read_text()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.suffix in {".md", ".json"}
    )


@pytest.mark.parametrize("how", ["rows", "inspect", "harbor"])
@pytest.mark.parametrize("plant", [_link_prompt, _link_folder], ids=["TASK.md", "folder"])
def test_export_no_verify_refuses_a_link(
    tiny: Tiny,
    tmp_path: Path,
    victim: Path,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
    plant: Plant,
) -> None:
    batch = tiny.copy_batch(tmp_path / "batch")
    named = plant(tiny, batch, victim)
    args = ["export", "--tasks", str(batch), "--format", how, "--task", CLAMP, "--no-verify"]
    with monkeypatch.context() as patch:  # the control: the host's file goes out with the task
        _checks_off(patch)
        assert main([*args, "--out", str(tmp_path / "leaked")]) == 0
    assert SECRET.strip() in _export_text(tmp_path / "leaked", how)
    done = run_cli(*args, "--out", str(tmp_path / "out"))
    _refused(done, named)
    assert not (tmp_path / "out.jsonl").exists()


def test_run_no_verify_refuses_a_linked_prompt(
    tiny: Tiny, tmp_path: Path, victim: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch = tiny.copy_batch(tmp_path / "batch")
    named = _link_prompt(tiny, batch, victim)
    args = ["run", "--tasks", str(batch), "--agent", "cat TASK.md", "--task", CLAMP]
    args += ["--sandbox", "plain", "--no-verify"]
    leaked = tmp_path / "leaked"
    with monkeypatch.context() as patch:  # the control: the agent reads the host's file
        _checks_off(patch)
        main([*args, "--out", str(leaked)])
    assert SECRET.strip() in "".join(p.read_text() for p in (leaked / "logs").rglob("*.stdout"))
    done = run_cli(*args, "--out", str(tmp_path / "run"))
    _refused(done, named)
    assert not list((tmp_path / "run").rglob("*.stdout"))


@pytest.mark.parametrize("where", ["specs", "hidden", "snapshot", "meta"])
def test_validate_no_verify_names_the_link(
    tiny: Tiny, tmp_path: Path, victim: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    batch = tiny.copy_batch(tmp_path / "batch")
    ident = tiny.id_of(CLAMP)
    repo = f"{HIDDEN}/{REPOS}/{tiny.task(CLAMP).hidden.repo_dir}"
    named = {
        "specs": f"{SPECS}/{ident}/notes.txt",
        "hidden": f"{HIDDEN}/{ident}/notes.txt",
        "snapshot": f"{repo}/tree/README.txt",
        "meta": f"{repo}/meta/notes.txt",
    }[where]
    (batch / named).parent.mkdir(parents=True, exist_ok=True)
    (batch / named).symlink_to(victim)
    args = ["validate", "--tasks", str(batch), "--no-verify", "--json"]
    with monkeypatch.context() as patch:  # the control: without the checks the task is valid
        _checks_off(patch)
        assert main(args) == 0
    done = run_cli(*args)
    assert done.returncode == 2, done.stderr
    problem = next(t["problem"] for t in json.loads(done.stdout)["tasks"] if t["task_id"] == ident)
    assert problem and named in problem and "symlink" in problem, problem


def test_a_link_the_snapshot_keeps_inside_itself_is_accepted(tiny: Tiny, tmp_path: Path) -> None:
    """gen keeps a repository's links that stay inside its tree: a batch holding one loads."""
    batch = tiny.copy_batch(tmp_path / "batch")
    tree = batch / HIDDEN / REPOS / tiny.task(CLAMP).hidden.repo_dir / "tree"
    (tree / "docs").mkdir()
    (tree / "docs" / "core.py").symlink_to("../src/tinypkg/core.py")
    done = run_cli("validate", "--tasks", str(batch), "--no-verify")
    assert done.returncode == 0, done.stderr


def test_harbor_refuses_a_linked_schema(
    tiny: Tiny, tmp_path: Path, victim: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The JSON Schemas beside the tasks are copied into each Harbor task's verifier batch."""
    batch = tiny.copy_batch(tmp_path / "batch")
    schema = sorted((batch / SPECS).glob("*.schema.json"))[0]
    schema.unlink()
    schema.symlink_to(victim)
    args = ["export", "--tasks", str(batch), "--format", "harbor", "--task", CLAMP, "--no-verify"]
    with monkeypatch.context() as patch:  # the control: a plain copy follows the link
        patch.setattr(links, "refuse_top_links", lambda root: None)
        patch.setattr(
            confined, "read_bytes", lambda root, rel, limit=None: (root / rel).read_bytes()
        )
        assert main([*args, "--out", str(tmp_path / "leaked")]) == 0
    assert SECRET.strip() in _export_text(tmp_path / "leaked", "harbor")
    _refused(run_cli(*args, "--out", str(tmp_path / "out")), f"{SPECS}/{schema.name}")


@pytest.mark.parametrize("where", [f"{HIDDEN}/manifest.json", f"{HIDDEN}/{REPOS}", SPECS])
def test_a_top_folder_or_the_manifest_as_a_link_refuses_the_batch(
    tiny: Tiny, tmp_path: Path, victim: Path, where: str
) -> None:
    batch = tiny.copy_batch(tmp_path / "batch")
    moved = tmp_path / "home" / "moved"
    shutil.move(batch / where, moved)
    (batch / where).symlink_to(moved)
    for verify in ([], ["--no-verify"]):
        _refused(run_cli("validate", "--tasks", str(batch), *verify), where)
