"""TypeScript tasks exported for Harbor and graded by Harbor's own runner (`harbor run`, its docker
environment): on two tasks of the session's corpus/tslib batch (a function and a method; nothing
minted here), the oracle agent scores 1.0 and the nop agent, which leaves the stub in place, 0.0,
as Harbor's result files say; every container ran with no network.  The verifier image carries
the host's Node (`exporters.harbor_node`) behind the jail's wrapper: a candidate that reads the
root-only batch is refused (EACCES) there, and reads it once the wrapper is taken away (the
positive control).  The images come from `--build-images`, the verifier base's Python layers
shared with test_harbor_run.py's.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from replicate.batch.store import Batch
from replicate.exporters import harbor_files, harbor_images, harbor_node
from replicate.jail.node import node_binary
from tests.e2e.conftest import Minted, replicate
from tests.e2e.test_harbor_run import harbor, harbor_trials, rewards_are

pytestmark = pytest.mark.usefixtures("docker_engine")

SYMBOLS = ("src/version.bumpVersion", "src/cache.BoundedCache.get")
__all__ = ["harbor"]  # the Harbor venv's fixture, shared
# what a candidate's body reads of the root-only batch: its byte count, or why it could not
READ_HIDDEN = (
    "{ const fs = process.getBuiltinModule('fs'); "
    "try { return String(fs.readFileSync(%r).length); } "
    "catch (e) { return String((e as { code?: string }).code); } }"
)


@pytest.fixture(scope="module")
def exported(
    tslib: Minted, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, tuple[str, ...]]:
    if harbor_node.foreign_libraries(node_binary()):
        pytest.skip("this machine's node is not self-contained: a Harbor export refuses it")
    batch = Batch.open(tslib.batch)
    ids = tuple(batch.resolve(symbol) for symbol in SYMBOLS)
    out = tmp_path_factory.mktemp("harbor-run-script") / "out"
    picks = [arg for task_id in ids for arg in ("--task", task_id)]
    done = replicate("export", "--tasks", str(tslib.batch), "--format", "harbor", "--out",
                     str(out), *picks, "--build-images", timeout=1800)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "JavaScript/TypeScript" not in done.stderr  # no warning left for these tasks
    return out, ids


@pytest.fixture(scope="module")
def trials(harbor: Path, exported: tuple[Path, tuple[str, ...]]) -> Iterator[dict[str, list[Any]]]:
    yield from harbor_trials(harbor, exported[0], len(SYMBOLS))


@pytest.mark.parametrize(("agent", "reward"), [("oracle", 1.0), ("nop", 0.0)])
def test_harbor_grades_the_typescript_export(
    trials: dict[str, list[Any]], exported: tuple[Path, tuple[str, ...]], agent: str, reward: float
) -> None:
    rewards_are(trials[agent], exported[1], reward)


def test_every_container_harbor_ran_had_no_network(trials: dict[str, list[Any]]) -> None:
    assert trials["networks"] == ["none"] * (2 * 2 * len(SYMBOLS))


def grade_in_verifier(task_id: str, candidate: Path, wrapped: bool) -> dict[str, Any]:
    """test.sh run in the task's verifier image on `candidate` (as Harbor runs it, with no
    network); `wrapped=False` puts the bare node where the jail's wrapper is."""
    _, tag = harbor_images.task_tags(task_id)
    target = f"{harbor_files.WORKDIR}/src/version.ts"
    unwrap = "" if wrapped else f"cp {harbor_node.NODE_IN_IMAGE} {harbor_node.NODE_ON_PATH} && "
    script = (
        f"{unwrap}mkdir -p /app/src && cp /mnt/candidate {target} && /tests/test.sh >/dev/null; "
        f"cat {harbor_files.REWARD_DIR}/verdict.json"
    )
    argv = ["docker", "run", "--rm", "--network", "none", "-v", f"{candidate}:/mnt/candidate:ro",
            tag, "sh", "-c", script]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    verdict: dict[str, Any] = json.loads(done.stdout)
    return verdict


def test_a_candidate_cannot_read_the_hidden_batch(
    tslib: Minted, exported: tuple[Path, tuple[str, ...]], tmp_path: Path
) -> None:
    task = Batch.open(tslib.batch).load(exported[1][0])
    assert task.hidden.target.path == "src/version.ts"
    hidden = f"{harbor_files.BATCH_IN_IMAGE}/reference_impls/{task.id}/expected.jsonl"
    span, original = task.hidden.target.body_span, task.original_source()
    body = (READ_HIDDEN % hidden).encode()
    candidate = tmp_path / "version.ts"
    candidate.write_bytes(original[: span.start_byte] + body + original[span.end_byte :])
    refused = grade_in_verifier(task.id, candidate, wrapped=True)
    assert refused["reward"] == 0.0 and refused["counterexample"]["got"] == '"EACCES"', refused
    # positive control: without the wrapper the candidate runs as root and reads the file
    read = grade_in_verifier(task.id, candidate, wrapped=False)["counterexample"]["got"]
    assert read.strip('"').isdigit() and int(read.strip('"')) > 0, read
