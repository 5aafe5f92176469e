"""An unmodified `replicate export --format harbor` run by Harbor's own runner (`harbor run`,
its docker environment): the oracle agent scores 1.0 and the nop agent 0.0 on two tasks of the
bundled batch, as Harbor's own result files say.  The images are built once (`--build-images`,
then Harbor's builds reuse their layers, kept between the two jobs); every container Harbor
started ran with no network.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from replicate.batch.store import Batch
from tests.e2e.conftest import REPO_ROOT, replicate
from tests.harbor_venv import compose_missing, harbor_python

pytestmark = pytest.mark.usefixtures("docker_engine")

TASKS = 2
HARBOR_TIMEOUT_S = 1800


@pytest.fixture(scope="module")
def harbor() -> Path:
    python = harbor_python()
    if python is None:
        pytest.skip("no Harbor venv (Python 3.12): run scripts/install.sh --dev")
    missing = compose_missing()
    assert missing is None, missing  # docker answers (docker_engine): compose must too
    return python.parent / "harbor"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[str, ...]]:
    ids = Batch.open(REPO_ROOT).ids[:TASKS]
    out = tmp_path_factory.mktemp("harbor-run") / "out"
    picks = [arg for task_id in ids for arg in ("--task", task_id)]
    done = replicate("export", "--tasks", str(REPO_ROOT), "--format", "harbor", "--out",
                     str(out), *picks, "--build-images", timeout=1800)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return out, ids


def compose_containers(prefixes: list[str]) -> list[Any]:
    """The containers of the compose projects whose names start with one of `prefixes`."""
    import docker

    label = "com.docker.compose.project"
    found = docker.from_env().containers.list(all=True, filters={"label": label})
    return [c for c in found if c.labels[label].startswith(tuple(prefixes))]


def harbor_trials(harbor: Path, out: Path, tasks: int) -> Iterator[dict[str, list[Any]]]:
    """Each agent's job run by Harbor on the export at `out`: its trials' result.json files
    (and the networks of the containers it kept, removed after)."""
    jobs = out.parent / "jobs"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # no fetch of a price list
    results: dict[str, list[Any]] = {}
    kept: list[Any] = []
    try:
        for agent in ("oracle", "nop"):
            argv = [str(harbor), "run", "-p", str(out), "-a", agent, "-e", "docker", "-o",
                    str(jobs), "--job-name", agent, "-n", str(tasks), "-q", "-y",
                    "--ek", "keep_containers=true"]  # fmt: skip
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=HARBOR_TIMEOUT_S, env=env, check=False
            )
            assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
            folders = [p for p in (jobs / agent).iterdir() if (p / "result.json").is_file()]
            results[agent] = [json.loads((p / "result.json").read_text()) for p in folders]
            kept += compose_containers([p.name.lower().replace(".", "-") for p in folders])
        results["networks"] = [c.attrs["HostConfig"]["NetworkMode"] for c in kept]
        yield results
    finally:  # what `harbor run --delete` would have removed: the containers, their images
        images = {container.attrs["Image"] for container in kept}
        for container in kept:
            container.remove(force=True)
        for image in images:  # content-addressed: two trials of one task may share one
            subprocess.run(["docker", "rmi", "--force", image], capture_output=True, check=False)


def rewards_are(results: list[Any], ids: tuple[str, ...], reward: float) -> None:
    """One trial per task of `ids`, none failed, each rewarded `reward` alone."""
    assert sorted(r["task_name"] for r in results) == sorted(f"replicate/{i}" for i in ids)
    for result in results:
        assert result["exception_info"] is None, result["exception_info"]
        # reward.json holds the reward alone: Harbor reads every key of it as a reward
        assert result["verifier_result"]["rewards"] == {"reward": reward}


@pytest.fixture(scope="module")
def trials(harbor: Path, exported: tuple[Path, tuple[str, ...]]) -> Iterator[dict[str, list[Any]]]:
    yield from harbor_trials(harbor, exported[0], TASKS)


@pytest.mark.parametrize(("agent", "reward"), [("oracle", 1.0), ("nop", 0.0)])
def test_harbor_runs_the_export(
    trials: dict[str, list[Any]],
    exported: tuple[Path, tuple[str, ...]],
    agent: str,
    reward: float,
) -> None:
    rewards_are(trials[agent], exported[1], reward)


def test_every_container_harbor_ran_had_no_network(trials: dict[str, list[Any]]) -> None:
    # an agent's container and a verifier's per trial, for each of the two agents
    assert trials["networks"] == ["none"] * (2 * 2 * TASKS)
