"""TypeScript tasks exported for Harbor and graded by Harbor's own runner (`harbor run`, its docker
environment): on two tasks of the session's corpus/tslib batch (a function and a method; nothing
minted here), the oracle agent scores 1.0 and the nop agent, which leaves the stub in place, 0.0,
as Harbor's result files say; every container ran with no network.  The verifier image carries
the host's Node (`exporters.harbor_node`) behind the jail's wrapper: a candidate that reads the
root-only batch is refused (EACCES) there, and reads it once the wrapper is taken away (the
positive control).  The agent's image runs a TypeScript test file (failing on the stub, passing
on the original; not at all without the preloaded loader).  A JavaScript repository with an npm
dependency (a small `file:` one, minted here without the strength pass) grades 1.0 in its
verifier image, which carries the installed dependency in its cache under the key of the
batch's tree there, and 0.0 once that folder is removed (the control); its agent's image runs
node and requires the dependency.  The images come from `--build-images`, the verifier base's
Python layers shared with test_harbor_run.py's.
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
from tests.integration.languages.test_npm_deps_grading import _repo

pytestmark = pytest.mark.usefixtures("docker_engine")

CACHE_NODE_DEPS = f"{harbor_files.CACHE_IN_IMAGE}/node-deps"
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


def grade_in_verifier(task_id: str, candidate: Path, path: str, first: str = "") -> dict[str, Any]:
    """test.sh run in the task's verifier image on `candidate` as the target file at `path` (as
    Harbor runs it, with no network), after the shell commands `first`."""
    _, tag = harbor_images.task_tags(task_id)
    target = f"{harbor_files.WORKDIR}/{path}"
    script = (
        f"{first}mkdir -p $(dirname {target}) && cp /mnt/candidate {target} "
        f"&& /tests/test.sh >/dev/null; cat {harbor_files.REWARD_DIR}/verdict.json"
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
    hidden = f"{harbor_files.BATCH_IN_IMAGE}/reference_impls/{task.id}/expected.jsonl"
    span, original = task.hidden.target.body_span, task.original_source()
    body = (READ_HIDDEN % hidden).encode()
    candidate = tmp_path / "version.ts"
    candidate.write_bytes(original[: span.start_byte] + body + original[span.end_byte :])
    refused = grade_in_verifier(task.id, candidate, task.hidden.target.path)
    assert refused["reward"] == 0.0 and refused["counterexample"]["got"] == '"EACCES"', refused
    # positive control: without the wrapper the candidate runs as root and reads the file
    unwrap = f"cp {harbor_node.NODE_IN_IMAGE} {harbor_node.NODE_ON_PATH} && "
    got = grade_in_verifier(task.id, candidate, task.hidden.target.path, unwrap)
    read = got["counterexample"]["got"].strip('"')
    assert read.isdigit() and int(read) > 0, got


@pytest.fixture(scope="module")
def with_deps(
    exported: tuple[Path, tuple[str, ...]], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, str]:
    """A CommonJS repository whose target requires its one npm dependency (a `file:` one,
    installed offline), minted and exported; its task's two images built on the verifier
    base the module's export built (the one with Node)."""
    root = tmp_path_factory.mktemp("harbor-deps")
    batch, out = root / "batch", root / "out"
    done = replicate("gen", "--repo", str(_repo(root, "commonjs")), "--out", str(batch),
                     "--no-strength", timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    done = replicate("export", "--tasks", str(batch), "--format", "harbor", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    (task_id,) = Batch.open(batch).ids
    agent, verifier = harbor_images.task_tags(task_id)
    harbor_images.build(out / task_id / "environment", agent)
    harbor_images.build(out / task_id / "tests", verifier)
    return out / task_id, task_id


def test_the_images_carry_the_npm_dependencies(with_deps: tuple[Path, str]) -> None:
    folder, task_id = with_deps
    oracle = folder / "solution" / "original.js"
    assert grade_in_verifier(task_id, oracle, "index.js")["reward"] == 1.0
    # positive control: the same image without the installed dependencies in its cache
    gone = grade_in_verifier(task_id, oracle, "index.js", f"rm -rf {CACHE_NODE_DEPS} && ")
    assert gone["reward"] == 0.0 and "scale-helper" in json.dumps(gone), gone
    agent, _ = harbor_images.task_tags(task_id)
    argv = ["docker", "run", "--rm", "--network", "none", "-u", harbor_files.AGENT_USER, agent,
            "node", "-e", "console.log(require('scale-helper').times(6, 7))"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert (done.returncode, done.stdout) == (0, "42\n"), done.stderr[-2000:]


def node_in_agent(task_id: str, script: str, candidate: Path | None = None) -> str:
    """`script` run by sh in the task's agent image, as its user, in /app, with no network
    (`candidate`, when given, at /mnt/candidate); its output and errors."""
    agent, _ = harbor_images.task_tags(task_id)
    mount = ["-v", f"{candidate}:/mnt/candidate:ro"] if candidate else []
    argv = ["docker", "run", "--rm", "--network", "none", "-u", harbor_files.AGENT_USER, *mount,
            agent, "sh", "-c", f"{script} 2>&1"]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False).stdout


def test_the_agent_image_runs_the_typescript_tests(
    exported: tuple[Path, tuple[str, ...]],
) -> None:
    out, ids = exported
    task_id = ids[1]  # BoundedCache.get: test/cache.test.ts calls it
    run = "node test/cache.test.ts"
    stub = node_in_agent(task_id, run)
    assert "not implemented" in stub and "# fail 0" not in stub, stub[-2000:]
    oracle = out / task_id / "solution" / "original.ts"
    right = node_in_agent(task_id, f"cp /mnt/candidate src/cache.ts && {run}", oracle)
    assert "# fail 0" in right and "# pass 0" not in right, right[-2000:]
    # positive control: without the preloaded loader, node 20 does not run a .ts file
    bare = node_in_agent(task_id, f"NODE_OPTIONS= {run}")
    assert "ERR_UNKNOWN_FILE_EXTENSION" in bare, bare[-2000:]
