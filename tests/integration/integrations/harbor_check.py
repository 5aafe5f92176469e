"""Read exported task folders back with Harbor's own code (run in Harbor's Python 3.12 venv).

python harbor_check.py DIR...   ->  one JSON object per line: what Harbor made of each folder
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harbor.lint.task import lint_task
from harbor.models.task.task import Task
from harbor.models.task.verifier_mode import (
    resolve_task_verifier_mode,
    resolve_verifier_environment_definition,
)


def describe(folder: Path) -> dict[str, object]:
    task = Task(folder)
    config = task.config
    definition = resolve_verifier_environment_definition(config, task.paths)
    return {
        "dir": str(folder),
        "name": task.name,
        "schema_version": config.schema_version,
        "instruction": task.instruction,
        "metadata": config.metadata,
        "artifacts": [a if isinstance(a, str) else a.source for a in config.artifacts],
        "verifier_mode": resolve_task_verifier_mode(config).value,
        "verifier_dir": str(definition.directory) if definition else None,
        "bundled_tests": definition.bundled_tests if definition else None,
        "agent_network": config.agent.network_mode.value if config.agent.network_mode else None,
        "verifier_network": (
            config.verifier.network_mode.value if config.verifier.network_mode else None
        ),
        "agent_user": config.agent.user,
        "workdir": config.environment.workdir,
        "verifier_workdir": config.verifier.environment.workdir
        if config.verifier.environment
        else None,
        "verifier_environment_network": config.verifier.environment.network_mode.value
        if config.verifier.environment
        else None,
        "lint": [finding.model_dump(mode="json") for finding in lint_task(folder)],
    }


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(json.dumps(describe(Path(arg))))
