"""No export format shows a model its task's original body or hidden calls.

Model-visible, per task: rows: its row; inspect: its sample (workspace files, instruction,
metadata) and the task file; harbor: instruction.md, task.toml and environment/ (the agent image's
build context: nothing else can enter that image).  Needles: the original body, and every hidden
call rendering the repository does not already show (a traced call is often written out in the
repository's own tests, which every workspace holds, as in `replicate run`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from replicate import confined
from replicate.batch.store import LoadedTask
from tests.integration.integrations.rows import body_text, cli, read_jsonl
from tests.integration.minted import Tiny

HIDDEN_NAMES = ("expected.jsonl", "inputs.jsonl", "reference_impls", "original.py")


def needles(task: LoadedTask) -> list[str]:
    public = "\n".join(
        confined.read_bytes(task.repo.tree, rel).decode("utf-8", errors="replace")
        for rel in confined.regular_files(task.repo.tree)
    )
    calls = sorted({i.call for i in task.inputs if i.call and i.call not in public})
    return [body_text(task), *calls]


def texts(paths: list[Path]) -> Iterator[tuple[Path, str]]:
    for path in paths:
        for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
            if file.is_file():
                yield file, file.read_bytes().decode("utf-8", errors="replace")


def found(paths: list[Path], secrets: list[str]) -> list[str]:
    hits = [f"{file}: {s[:40]!r}" for file, text in texts(paths) for s in secrets if s in text]
    names = [f"{file}" for file, _ in texts(paths) if any(n in str(file) for n in HIDDEN_NAMES)]
    return hits + names


@pytest.fixture(scope="module")
def exports(tiny: Tiny, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("leaks")
    made = {}
    for fmt in ("rows", "inspect", "harbor"):
        out = root / fmt
        done = cli("export", "--tasks", str(tiny.batch_dir), "--format", fmt, "--out", str(out))
        assert done.returncode == 0, done.stderr
        made[fmt] = out
    return made


def visible(fmt: str, out: Path, task: LoadedTask, scratch: Path) -> list[Path]:
    """The files of `out` a model working on `task` is shown (a row or a sample: as a file)."""
    if fmt == "harbor":
        folder = out / task.id
        return [folder / "instruction.md", folder / "task.toml", folder / "environment"]
    if fmt == "inspect":
        samples = json.loads((out / "samples.json").read_text(encoding="utf-8"))["samples"]
        sample = scratch / f"{task.id}.sample.json"
        sample.write_text(json.dumps([s for s in samples if s["task_id"] == task.id]))
        return [out / "replicate_inspect.py", out / "workspaces" / task.id, sample]
    rows = [r for r in read_jsonl(out.with_suffix(".jsonl")) if r["task_id"] == task.id]
    row = scratch / f"{task.id}.row.json"
    row.write_text(json.dumps(rows, ensure_ascii=False))
    return [row]


@pytest.mark.parametrize("fmt", ["rows", "inspect", "harbor"])
def test_no_task_shows_its_body_or_hidden_calls(
    tiny: Tiny, exports: dict[str, Path], fmt: str, tmp_path: Path
) -> None:
    for task_id in tiny.batch.ids:
        task = tiny.batch.load(task_id)
        secrets = needles(task)
        assert len(secrets) > 1, task_id  # the body and at least one hidden call
        assert found(visible(fmt, exports[fmt], task, tmp_path), secrets) == [], task_id


@pytest.mark.parametrize("fmt", ["inspect", "harbor"])
def test_the_search_finds_a_planted_secret(
    tiny: Tiny, exports: dict[str, Path], fmt: str, tmp_path: Path
) -> None:
    """Positive control, on a copy: the body planted in a workspace file, a hidden call in the
    instruction, and a hidden file put into the workspace are each found."""
    task = tiny.batch.load(tiny.batch.ids[0])
    body, call = needles(task)[:2]
    copies = []
    for path in visible(fmt, exports[fmt], task, tmp_path):
        dest = tmp_path / "planted" / path.name
        if path.is_dir():
            shutil.copytree(path, dest)
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
        copies.append(dest)
    assert found(copies, [body, call]) == []
    workspace = next(p for p in copies if p.is_dir())
    target = next(p for p in workspace.rglob("*.py") if str(p).endswith(task.hidden.target.path))
    target.write_text(target.read_text() + f"\n# {body}\n")
    assert len(found(copies, [body, call])) == 1
    instruction = next(p for p in copies if p.is_file())
    instruction.write_text(instruction.read_text() + call)
    (workspace / "expected.jsonl").write_text("{}")
    assert len(found(copies, [body, call])) == 3
