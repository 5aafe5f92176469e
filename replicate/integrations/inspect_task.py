"""The inspect_ai side of `replicate export --format inspect`: samples, the scorer, the task.

The exported `replicate_inspect.py` calls `build_task`.  Each sample's files are its workspace (the
stubbed tree and TASK.md) and nothing else; the scorer reads the target file back out of the
sample's sandbox and grades it here, on the host, through the batch (`grading.grader_for`), so
hidden inputs, expected outcomes and the original never enter the sandbox.  inspect_ai is imported
when a task is built, not when this module is.
"""

from __future__ import annotations

import json
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
    from inspect_ai.solver import Solver

SAMPLES_NAME = "samples.json"
SCORER_NAME = "replicate_grade"


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


def replicate_scorer() -> Scorer:
    """Reads the target file from the sandbox, grades it on the host; reward in [0, 1]."""
    import anyio
    from inspect_ai.scorer import Score, Target, mean, scorer, stderr
    from inspect_ai.solver import TaskState
    from inspect_ai.util import OutputLimitExceededError, sandbox

    @scorer(metrics=[mean(), stderr()], name=SCORER_NAME)
    def replicate_grade() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            meta = state.metadata
            try:
                text = await sandbox().read_file(meta["path"])
            except (OSError, UnicodeDecodeError, OutputLimitExceededError):
                text = ""  # graded as it is: no candidate earns nothing
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


def build_task(path: Path, *, sandbox: str = "docker", sandbox_config: str | None = None) -> Task:
    """The inspect_ai Task of an export: one sample per task, graded by `replicate_scorer`."""
    from inspect_ai import Task

    spec: str | tuple[str, str] = (sandbox, sandbox_config) if sandbox_config else sandbox
    return Task(
        dataset=load_samples(path),
        solver=default_solver(),
        scorer=replicate_scorer(),
        sandbox=spec,
        name="replicate",
    )
