"""`replicate export --format harbor --build-images`, graded for real in Docker.

One export of one task of the committed batch, its images built once for the session.  The
verifier container is run as Harbor runs it (no network, the artifact at its path, /tests/test.sh)
on: the original (1.0), the stub (0), a result whose `__eq__` is always true (0), a candidate
that reads its task's hidden files from the verifier image and an artifact that is a symlink to
the original there (0).  The agent image's whole file system holds neither the original body
nor a hidden file.
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path, PurePosixPath

import pytest

from replicate.batch.store import Batch, LoadedTask
from replicate.exporters.harbor_images import task_tags
from tests.e2e.conftest import REPO_ROOT, replicate

BATCH = "/opt/replicate/batch"

READ_HIDDEN = """

import glob as _glob
for _path in _glob.glob("/opt/replicate/batch/reference_impls/_repos/*/tree/{path}"):
    exec(compile(open(_path).read(), __file__, "exec"), globals())
"""


pytestmark = pytest.mark.usefixtures("docker_engine")


@pytest.fixture(scope="module")
def task() -> LoadedTask:
    batch = Batch.open(REPO_ROOT)
    return batch.load(next(i for i in batch.ids if "__class." not in i))  # a function task


@pytest.fixture(scope="module")
def exported(
    docker_engine: None, task: LoadedTask, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """Module-scoped, after `docker_engine`: a session fixture would run first, building images
    for minutes before the module's check could skip (or fail) for want of docker."""
    out = tmp_path_factory.mktemp("harbor-images") / "out"
    done = replicate("export", "--tasks", str(REPO_ROOT), "--format", "harbor", "--out",
                     str(out), "--task", task.id, "--build-images", timeout=1800)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def verify(task: LoadedTask, candidate: str, scratch: Path, link: bool = False) -> dict[str, float]:
    """The verifier image run on `candidate` as Harbor runs it (the artifact at its path, the
    verifier's log folder mounted from the host); the reward.json it wrote.  With `link`, the
    artifact is a symlink to the original in the verifier image instead."""
    import docker

    target = PurePosixPath("/app", task.hidden.target.path)
    (scratch / "folder").mkdir(parents=True)
    path, logs = scratch / "folder" / target.name, scratch / "verifier"
    if link:
        tree = f"{BATCH}/reference_impls/_repos/{task.hidden.repo_dir}/tree"
        path.symlink_to(f"{tree}/{task.hidden.target.path}")
    else:
        path.write_text(candidate, encoding="utf-8")
    logs.mkdir()
    docker.from_env().containers.run(
        task_tags(task.id)[1],
        ["/tests/test.sh"],
        volumes={
            str(path.parent): {"bind": str(target.parent), "mode": "ro"},
            str(logs): {"bind": "/logs/verifier", "mode": "rw"},
        },
        network_mode="none",
        remove=True,
    )
    assert (logs / "verdict.json").is_file()
    assert json.loads((logs / "infra.json").read_text(encoding="utf-8")) == {"infra_error": False}
    rewards: dict[str, float] = json.loads((logs / "reward.json").read_text(encoding="utf-8"))
    return rewards


def test_the_verifier_grades_the_artifact(task: LoadedTask, exported: Path, tmp_path: Path) -> None:
    original = (exported / task.id / "solution" / "original.py").read_text(encoding="utf-8")
    stub = task.stubbed_source().decode()
    always_equal = (  # a bare definition, spliced in place of the target
        f"{task.spec.signature}\n    class _Same:\n        def __eq__(self, other):\n"
        "            return True\n\n    return _Same()\n"
    )
    reading = stub + READ_HIDDEN.format(path=task.hidden.target.path)
    assert verify(task, original, tmp_path / "original") == {"reward": 1.0}
    for name, candidate in (("stub", stub), ("eq", always_equal), ("reads", reading)):
        assert verify(task, candidate, tmp_path / name) == {"reward": 0.0}
    assert verify(task, "", tmp_path / "link", link=True) == {"reward": 0.0}


def image_hits(tag: str, body: bytes) -> tuple[list[str], int]:
    """Files of image `tag` that hold `body` or are named like hidden files; files searched."""
    import docker

    container = docker.from_env().containers.create(tag, ["true"])
    try:
        stream = io.BytesIO(b"".join(container.export()))
    finally:
        container.remove()
    hits, files = [], 0
    with tarfile.open(fileobj=stream) as tar:
        for member in tar:
            if "reference_impls" in member.name or member.name.endswith("expected.jsonl"):
                hits.append(member.name)
            if member.isfile() and member.size < 5_000_000:
                files += 1
                data = tar.extractfile(member)
                if data is not None and body in data.read():
                    hits.append(member.name)
    return hits, files


def test_the_agent_image_holds_nothing_hidden(task: LoadedTask, exported: Path) -> None:
    span = task.hidden.target.body_span
    body = task.original_source()[span.start_byte : span.end_byte].strip()
    agent, verifier = task_tags(task.id)
    hits, files = image_hits(agent, body)
    assert files > 100 and hits == []
    # Positive control: the verifier image does hold the original, and the search finds it.
    hits, _ = image_hits(verifier, body)
    assert any(hit.endswith(task.hidden.target.path) for hit in hits), hits[:5]
