"""`replicate export --format inspect`: an inspect_ai task whose scorer grades on the host.

Run offline with `mockllm/model` and a solver that writes the target file into the sample's
sandbox (inspect_ai's `local` one): the original earns 1.0, the stub (nothing written) 0.0.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from replicate.grading.grader import original_source
from tests.integration.integrations.rows import cli
from tests.integration.minted import Tiny

SYMBOLS = ("tinypkg.core.clamp", "tinypkg.core.parse_int")


@pytest.fixture(scope="module")
def exported(tiny: Tiny, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("inspect") / "out"
    picks = [arg for symbol in SYMBOLS for arg in ("--task", symbol)]
    done = cli("export", "--tasks", str(tiny.batch_dir), "--format", "inspect", "--out", str(out),
               "--json", *picks)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tasks"] == len(SYMBOLS)
    return out


def load_task_module(out: Path) -> Any:
    spec = importlib.util.spec_from_file_location(
        "replicate_inspect_export", out / "replicate_inspect.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def writer(texts: dict[str, tuple[str, str]]) -> Any:
    """A solver that writes `texts[sample id]` = (path, text) into the sandbox, no model call."""
    from inspect_ai.solver import Generate, TaskState, solver
    from inspect_ai.util import sandbox

    @solver
    def write_files() -> Callable[..., Any]:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            if str(state.sample_id) in texts:
                path, text = texts[str(state.sample_id)]
                await sandbox().write_file(path, text)
            return state

        return solve

    return write_files()


def run_eval(out: Path, texts: dict[str, tuple[str, str]], log_dir: Path) -> dict[str, float]:
    inspect_ai = pytest.importorskip("inspect_ai")
    task = load_task_module(out).replicate_tasks(sandbox="local")
    [log] = inspect_ai.eval(
        task, model="mockllm/model", solver=writer(texts), log_dir=str(log_dir), display="none"
    )
    assert log.status == "success", log.error
    return {str(s.id): s.scores["replicate_grade"].value for s in log.samples}


def test_the_original_scores_one_and_the_stub_zero(
    tiny: Tiny, exported: Path, tmp_path: Path
) -> None:
    pytest.importorskip("inspect_ai")
    tasks = [tiny.task(symbol) for symbol in SYMBOLS]
    original = {t.id: (t.hidden.target.path, original_source(t).decode()) for t in tasks}
    assert run_eval(exported, original, tmp_path / "a") == {t.id: 1.0 for t in tasks}
    assert run_eval(exported, {}, tmp_path / "b") == {t.id: 0.0 for t in tasks}


def test_samples_hold_the_workspace_and_no_secret(tiny: Tiny, exported: Path) -> None:
    pytest.importorskip("inspect_ai")
    task = load_task_module(exported).replicate_tasks(sandbox="local")
    by_id = {str(sample.id): sample for sample in task.dataset}
    for symbol in SYMBOLS:
        loaded = tiny.task(symbol)
        sample = by_id[loaded.id]
        assert sample.files is not None and "TASK.md" in sample.files
        stub = Path(sample.files[loaded.hidden.target.path]).read_text(encoding="utf-8")
        assert "raise NotImplementedError" in stub
        assert loaded.prompt.strip() in str(sample.input)
        assert sample.metadata is not None and sample.metadata["symbol"] == symbol
