"""The `harbor` format: a Harbor task folder per task (SkyRL, rLLM, verifiers, NeMo Gym read them).

    OUT/<id>/instruction.md          TASK.md and where the repository is (/app)
    OUT/<id>/task.toml               [task] [metadata] [verifier] [agent] [environment], artifacts
    OUT/<id>/environment/            the agent's image: Dockerfile and the stubbed workspace,
                                     docker-compose.yaml (the container has no network)
    OUT/<id>/tests/                  the verifier's image: Dockerfile, test.sh, a one-task batch,
                                     docker-compose.yaml (likewise)
    OUT/<id>/solution/solve.sh       the oracle (the original file put back)
    OUT/_images/replicate-verifier/  the shared verifier base image: Dockerfile, wheels/

Hidden inputs, expected outcomes and the original live only under tests/ and solution/, which
Harbor shows the verifier and the oracle, never the agent.  `--build-images` also fills the
wheelhouse and builds every image locally (`replicate.exporters.harbor_images`).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

from replicate import __version__, confined
from replicate.batch import HIDDEN, REPOS, SPECS, Batch, LoadedTask, write_manifest
from replicate.exporters import harbor_files as files
from replicate.exporters import harbor_node as node
from replicate.exporters.base import ExportOptions, Written
from replicate.exporters.inspect_eval import ensure_empty
from replicate.exporters.plan import ExportPlan, PlannedTask
from replicate.exporters.workspace import write_workspace
from replicate.grading import is_script_task

IMAGES = "_images"
VERIFIER_BASE = "replicate-verifier"
AGENT_TIMEOUT_S = 1800.0
VERIFIER_TIMEOUT_S = 600.0
STRATA = ("traced", "widened", "edge", "raises")


def task_metadata(task: LoadedTask) -> dict[str, Any]:
    source, strength = task.spec.source, task.hidden.strength
    counts = Counter(str(item.stratum) for item in task.inputs)
    return {
        "source_repo": source.repo,
        "commit": source.commit,
        "path": source.path,
        "symbol": source.symbol,
        "kill_rate": strength.kill_rate if strength is not None else None,
        "strata": {name: counts.get(name, 0) for name in STRATA},
        "hidden_inputs": len(task.inputs),
        "body_statements": task.spec.body_statements,
        "grader_version": task.hidden.grader_version,
        "exported_by": f"replicate-rl {__version__}",
    }


def task_toml(item: PlannedTask) -> str:
    task, split = item.task, item.placement.split
    target = f"{files.WORKDIR}/{task.hidden.target.path}"
    # Harbor's "no-network" needs its egress sidecar (images from a hub) under its docker
    # environment; "public" runs anywhere, and each image's docker-compose.yaml closes the network.
    network = files.HARBOR_NETWORK_MODE
    return files.toml_document(
        {"schema_version": files.HARBOR_SCHEMA_VERSION, "artifacts": [target]},
        {
            "task": {
                "name": f"replicate/{task.id}",
                "description": f"Re-implement `{task.spec.source.symbol}` ({split})",
                "keywords": ["replicate", task.spec.language, "code"],
            },
            "metadata": {
                **task_metadata(task),
                "split": split,
                "split_group": item.placement.group,
                "visible_task_ids": list(item.visible),
            },
            "verifier": {
                "timeout_sec": VERIFIER_TIMEOUT_S,
                "environment_mode": "separate",
                "network_mode": network,
            },
            # The verifier's own environment: a working directory its image has (not /app).
            "verifier.environment": {"network_mode": network, "workdir": files.VERIFIER_WORKDIR},
            "agent": {
                "timeout_sec": AGENT_TIMEOUT_S,
                "network_mode": network,
                "user": files.AGENT_USER,
            },
            "environment": {"network_mode": network, "workdir": files.WORKDIR},
        },
    )


def write_text(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.chmod(path, mode)


def one_task_batch(batch: Batch, task: LoadedTask, dest: Path) -> None:
    """A batch holding `task` alone (its public and hidden halves, its repository), with a
    manifest of its own."""
    dest.mkdir(parents=True)
    repo = f"{HIDDEN}/{REPOS}/{task.hidden.repo_dir}"
    for part in (f"{SPECS}/{task.id}", f"{HIDDEN}/{task.id}", repo):
        for rel in confined.regular_files(batch.root / part):
            data = confined.read_bytes(batch.root / part, rel)
            confined.write_bytes(dest, f"{part}/{rel}", data)
    for schema in sorted((batch.root / SPECS).glob("*.schema.json")):
        rel = f"{SPECS}/{schema.name}"
        confined.write_bytes(dest, rel, confined.read_bytes(batch.root, rel))
    write_manifest(dest)


def write_task_dir(
    batch: Batch, item: PlannedTask, root: Path, deps: Path | None, base_tag: str
) -> None:
    """One task's folder; `deps`: a script task's installed npm dependencies (`harbor_node`);
    `base_tag`: the export's verifier base."""
    task = item.task
    target = task.hidden.target.path
    script = is_script_task(task)
    write_text(root / "instruction.md", item.text)
    write_text(root / "task.toml", task_toml(item))
    lock = task.repo.record.lock
    typescript = task.spec.language == "typescript"
    agent_node = node.agent_lines(deps is not None, typescript) if script else []
    write_text(root / "environment" / "Dockerfile", files.agent_dockerfile(bool(lock), agent_node))
    write_text(root / "environment" / files.COMPOSE_FILE, files.CLOSED_NETWORK_COMPOSE)
    if lock:  # the wheels come from --build-images (or `pip wheel --no-deps pip -r ...`)
        write_text(root / "environment" / "requirements.txt", "".join(f"{x}\n" for x in lock))
        (root / "environment" / "wheels").mkdir()
    write_workspace(task, root / "environment" / "workspace")
    verifier_node = node.verifier_lines(deps is not None)
    write_text(root / "tests" / "Dockerfile", files.verifier_dockerfile(verifier_node, base_tag))
    if deps is not None:
        node.copy_deps(deps, root / "tests", root / "environment")
    write_text(root / "tests" / files.COMPOSE_FILE, files.CLOSED_NETWORK_COMPOSE)
    write_text(root / "tests" / "test.sh", files.test_script(task.id, target), 0o755)
    write_text(root / "tests" / "jail-python.sh", files.JAIL_PYTHON, 0o755)
    one_task_batch(batch, task, root / "tests" / "batch")
    write_text(root / "solution" / "solve.sh", files.solve_script(target), 0o755)
    (root / "solution" / files.solution_name(target)).write_bytes(task.original_source())


def script_deps(plan: ExportPlan) -> tuple[dict[str, Path], list[str]]:
    """Each script repository's installed npm dependencies (by repository folder), and a
    warning for each whose could not be installed."""
    found: dict[str, Path] = {}
    failed: dict[str, str] = {}
    for item in plan.tasks:
        task, key = item.task, item.task.hidden.repo_dir
        if is_script_task(task) and key not in found and key not in failed:
            deps = node.installed_deps(task.repo.tree)
            if isinstance(deps, str):
                failed[key] = deps
            elif deps is not None:
                found[key] = deps
    return found, node.deps_warnings(sorted(failed.items()))


class HarborExporter:
    """OUT/<id>/ per task and OUT/_images/ (`out` must be absent or an empty folder)."""

    workdir: str | None = files.WORKDIR

    def export(self, batch: Batch, plan: ExportPlan, out: Path, options: ExportOptions) -> Written:
        ensure_empty(out)
        scripts = any(is_script_task(item.task) for item in plan.tasks)
        base = out / IMAGES / VERIFIER_BASE
        base.mkdir(parents=True)
        if scripts:  # first: a node the images cannot take is refused before any task
            node.write_base(base)
        deps, warnings = script_deps(plan)
        base_tag = node.VERIFIER_NODE_IMAGE if scripts else files.VERIFIER_IMAGE
        written = []
        for item in plan.tasks:
            repo_deps = deps.get(item.task.hidden.repo_dir)
            write_task_dir(batch, item, out / item.task.id, repo_deps, base_tag)
            written.append(out / item.task.id)
        base_node = node.base_lines() if scripts else []
        write_text(base / "Dockerfile", files.verifier_base_dockerfile(base_node))
        (base / "wheels").mkdir()
        if options.build_images:
            from replicate.exporters.harbor_images import build_all

            build_all(batch, written, base, base_tag)
        return Written(tasks=len(written), files=(*written, base), warnings=tuple(warnings))
