"""`replicate export --format inspect`: an inspect_ai task whose scorer grades on the host.

Run offline with `mockllm/model` and a solver that writes the target file into the sample's
sandbox (inspect_ai's `local` one): the original earns 1.0, the stub (nothing written) 0.0. And
with mockllm scripted in each solver style: the task's agent writing the file with its bash tool,
a plain `generate()` whose reply holds the code, the agent's `submit()` answer holding it.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from replicate.grading.grader import original_source, stubbed_source
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
    assert log.status == "success", log.error.traceback if log.error else None
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


# The model's side, scripted with mockllm: per sample, the code it answers with, and how.
Style = str  # "tool" (writes the file with bash), "reply" (answers in text), "submit"


def scripted(codes: dict[str, tuple[str, str]], style: Style) -> Any:
    """A mockllm model that answers each sample (told apart by the symbol its prompt names) in
    `style`: a bash call writing `codes[symbol] = (path, file text)` then `submit("done")`, a
    reply with the fenced code, or `submit()` of the fenced code."""
    from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model

    def output(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        said = answer(messages)
        said.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # else counted
        return said  # with tiktoken, whose encodings come from the network

    def answer(messages: list[Any]) -> ModelOutput:
        prompt = str(messages[0].text if len(messages) == 1 else messages[1].text)
        [(path, text)] = [v for symbol, v in codes.items() if f"`{symbol}`" in prompt]
        fenced = f"Here it is:\n\n```python\n{text}```\n"
        if style == "reply":
            return ModelOutput.from_content("mockllm/model", fenced)
        if style == "submit":
            return ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": fenced})
        if any(isinstance(m, ChatMessageTool) for m in messages):
            return ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "done"})
        command = f"cat > {path} <<'REPLICATE_EOF'\n{text}REPLICATE_EOF"
        return ModelOutput.for_tool_call("mockllm/model", "bash", {"command": command})

    return get_model("mockllm/model", custom_outputs=output, memoize=False)


def answers(tiny: Tiny, right: str) -> dict[str, tuple[str, str]]:
    """Per symbol, the target file's path and a file whose target is right (the original) for
    `right`, else wrong (returns None: a degenerate program)."""
    out = {}
    for symbol in SYMBOLS:
        task = tiny.task(symbol)
        target = task.hidden.target
        if symbol == right:
            text = original_source(task).decode()
        else:
            wrong = f"def {target.name}(*args, **kwargs):\n    return None\n"
            text = task.language().splice(stubbed_source(task), wrong, target).decode()
        out[symbol.rsplit(".", 1)[-1]] = (target.path, text)
    return out


@pytest.mark.parametrize("style", ["tool", "reply", "submit"])
def test_both_solver_styles_are_graded(
    tiny: Tiny, exported: Path, tmp_path: Path, style: Style
) -> None:
    """The file the agent wrote with a tool, else the code of its final answer (the reply's
    text, or the `submit()` answer): right 1.0, wrong 0.0, each task both ways."""
    inspect_ai = pytest.importorskip("inspect_ai")
    from inspect_ai.solver import generate

    tasks = {symbol: tiny.task(symbol).id for symbol in SYMBOLS}
    for right in SYMBOLS:
        task = load_task_module(exported).replicate_tasks(sandbox="local")
        solver = generate() if style == "reply" else None  # else the task's agent
        model = scripted(answers(tiny, right), style)
        [log] = inspect_ai.eval(
            task, model=model, solver=solver, log_dir=str(tmp_path / right), display="none"
        )
        assert log.status == "success", log.error.traceback if log.error else None
        got = {str(s.id): s.scores["replicate_grade"].value for s in log.samples}
        assert got == {tasks[s]: (1.0 if s == right else 0.0) for s in SYMBOLS}, (style, right)


def test_the_sandbox_is_local_without_a_docker_engine_inspect_can_drive(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from replicate.integrations import inspect_task

    monkeypatch.setattr(inspect_task, "docker_engine", lambda: (24, 0))
    assert inspect_task.default_sandbox() == "docker"
    assert capsys.readouterr().err == ""
    for engine, said in (((20, 10), "Docker Engine 20.10"), (None, "no Docker Engine")):
        monkeypatch.setattr(inspect_task, "docker_engine", lambda engine=engine: engine)
        assert inspect_task.default_sandbox() == "local"
        [line] = capsys.readouterr().err.splitlines()
        assert said in line and ">= 24" in line and "-T sandbox=docker" in line
