"""The inspect_ai side of `replicate export --format inspect`: samples, the scorer, the task.

The exported `replicate_inspect.py` calls `build_task`.  Each sample's files are its workspace (the
stubbed tree and TASK.md) and nothing else; the scorer reads the target file back out of the
sample's sandbox and grades it here, on the host, through the batch (`grading.grader_for`), so
hidden inputs, expected outcomes and the original never enter the sandbox.  Where the agent left
the file as it was, the code in its final answer is graded instead (a `submit()` answer, else the
reply's text), through the same extraction as every completion (`languages.python_answer`).
inspect_ai is imported when a task is built, not when this module is.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replicate import confined
from replicate.core import Verdict
from replicate.errors import ReplicateError
from replicate.integrations.grading import grader_for

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import Scorer
    from inspect_ai.solver import Solver, TaskState

SAMPLES_NAME = "samples.json"
SCORER_NAME = "replicate_grade"
SUBMIT_TOOL = "submit"
MIN_DOCKER_ENGINE = 24  # inspect_ai's docker sandbox needs Docker Engine 24 or later


def read_manifest(path: Path) -> dict[str, Any]:
    """The exported samples.json; a one-line error when it is missing or not ours."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReplicateError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("samples"), list):
        raise ReplicateError(f"{path}: not a replicate inspect export (no 'samples' list)")
    return data


def sample_files(workspace: Path) -> dict[str, str]:
    """Each regular file of the workspace (relative path -> absolute path on this machine)."""
    return {rel: str(workspace / rel) for rel in confined.regular_files(workspace)}


def load_samples(path: Path) -> list[Sample]:
    from inspect_ai.dataset import Sample

    data = read_manifest(path)
    root = path.parent
    samples = []
    for item in data["samples"]:
        samples.append(
            Sample(
                id=item["task_id"],
                input=item["instruction"],
                target="",
                metadata={**item["metadata"], "tasks_dir": data["tasks_dir"]},
                files=sample_files(root / item["workspace"]),
            )
        )
    return samples


def grade_candidate(tasks_dir: str, task_id: str, text: str) -> Verdict:
    return grader_for(Path(tasks_dir)).grade(task_id, text)


def stubbed_text(tasks_dir: str, task_id: str) -> str:
    """The target file as the sample's workspace holds it before the agent acts."""
    grader = grader_for(Path(tasks_dir))
    return grader.task(grader.resolve(task_id)).stubbed_source().decode("utf-8", "replace")


def final_answer(state: TaskState) -> str:
    """The agent's last `submit()` answer, else its final reply's text."""
    for message in reversed(state.messages):
        for call in getattr(message, "tool_calls", None) or []:
            if call.function == SUBMIT_TOOL and isinstance(call.arguments.get("answer"), str):
                return str(call.arguments["answer"])
    return state.output.completion if state.output else ""


def chosen_candidate(file_text: str | None, stub: str, answer: str) -> str:
    """What is graded: the target file when the agent changed it, else the final answer when it
    says anything, else the file as it is (the stub earns nothing)."""
    if file_text is not None and file_text != stub:
        return file_text
    if answer.strip():
        return answer
    return file_text or ""


def replicate_scorer() -> Scorer:
    """Reads the target file from the sandbox, grades it on the host; reward in [0, 1]."""
    import anyio
    from inspect_ai.scorer import Score, Target, mean, scorer, stderr
    from inspect_ai.util import OutputLimitExceededError, sandbox

    @scorer(metrics=[mean(), stderr()], name=SCORER_NAME)
    def replicate_grade() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            meta = state.metadata
            text: str | None
            try:
                text = await sandbox().read_file(meta["path"])
            except (OSError, UnicodeDecodeError, OutputLimitExceededError):
                text = None  # graded as it is: no candidate earns nothing
            stub = await anyio.to_thread.run_sync(stubbed_text, meta["tasks_dir"], meta["task_id"])
            text = chosen_candidate(text, stub, final_answer(state))
            verdict = await anyio.to_thread.run_sync(
                grade_candidate, meta["tasks_dir"], meta["task_id"], text
            )
            details = {"verdict": verdict.model_dump(mode="json")}
            if verdict.status == "infra_error":  # our failure, not the model's
                return Score.unscored(explanation=verdict.reason, metadata=details)
            return Score(
                value=float(verdict.reward or 0.0),
                answer=verdict.status,
                explanation=verdict.reason,
                metadata=details,
            )

        return score

    return replicate_grade()


def default_solver() -> Solver:
    from inspect_ai.solver import basic_agent
    from inspect_ai.tool import bash

    return basic_agent(tools=[bash(timeout=180)])


def docker_engine() -> tuple[int, ...] | None:
    """The version of the Docker Engine the `docker` client reaches, or None (no client, no
    engine answering within 10 s)."""
    client = shutil.which("docker")
    if client is None:
        return None
    try:
        done = subprocess.run(
            [client, "version", "--format", "{{.Server.Version}}"],
            capture_output=True, text=True, timeout=10, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.match(r"(\d+)\.(\d+)", done.stdout.strip()) if done.returncode == 0 else None
    return (int(found.group(1)), int(found.group(2))) if found else None


def default_sandbox() -> str:
    """`docker` where an engine inspect_ai can drive answers, else `local`, said in one line."""
    engine = docker_engine()
    if engine is not None and engine[0] >= MIN_DOCKER_ENGINE:
        return "docker"
    have = "no Docker Engine" if engine is None else f"Docker Engine {engine[0]}.{engine[1]}"
    print(
        f"replicate: {have} (inspect's docker sandbox needs >= {MIN_DOCKER_ENGINE}): samples run "
        "in the local sandbox, on this machine (-T sandbox=docker to insist)",
        file=sys.stderr,
    )
    return "local"


def build_task(
    path: Path, *, sandbox: str | None = None, sandbox_config: str | None = None
) -> Task:
    """The inspect_ai Task of an export: one sample per task, graded by `replicate_scorer`;
    the sandbox `docker` where Docker Engine 24+ answers, else `local` (`default_sandbox`)."""
    from inspect_ai import Task

    sandbox = sandbox or default_sandbox()
    spec: str | tuple[str, str] = (sandbox, sandbox_config) if sandbox_config else sandbox
    return Task(
        dataset=load_samples(path),
        solver=default_solver(),
        scorer=replicate_scorer(),
        sandbox=spec,
        name="replicate",
    )
