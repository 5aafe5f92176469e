"""`replicate export --format harbor`: task folders Harbor's own model and linter accept.

Harbor needs Python >= 3.12; its venv comes from scripts/install.sh --dev (REPLICATE_HARBOR_VENV,
default ~/.cache/replicate-harbor-venv).  Without it the Harbor read-back tests skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from replicate.batch.store import Batch
from replicate.exporters import harbor_files
from replicate.grading.grader import original_source, stubbed_source
from tests.harbor_venv import compose_missing, harbor_python
from tests.integration.integrations.rows import cli
from tests.integration.minted import Tiny

SYMBOLS = ("tinypkg.core.clamp", "tinypkg.core.parse_int")
CHECK = Path(__file__).with_name("harbor_check.py")


@pytest.fixture(scope="module")
def exported(tiny: Tiny, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("harbor") / "out"
    picks = [arg for symbol in SYMBOLS for arg in ("--task", symbol)]
    done = cli("export", "--tasks", str(tiny.batch_dir), "--format", "harbor", "--out", str(out),
               "--json", *picks)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tasks"] == len(SYMBOLS)
    return out


@pytest.fixture(scope="module")
def harbor_view(tiny: Tiny, exported: Path) -> dict[str, dict[str, Any]]:
    python = harbor_python()
    if python is None:
        pytest.skip("no Harbor venv (Python 3.12): run scripts/install.sh --dev")
    missing = compose_missing()  # Harbor's linter reads the tasks' compose files with it
    if missing is not None:
        if "docker" in os.environ.get("REPLICATE_REQUIRE_SANDBOXES", "").split(","):
            pytest.fail(missing)
        pytest.skip(missing)
    folders = [str(exported / tiny.id_of(symbol)) for symbol in SYMBOLS]
    done = subprocess.run(
        [str(python), str(CHECK), *folders], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    views = [json.loads(line) for line in done.stdout.splitlines()]
    return {Path(view["dir"]).name: view for view in views}


def test_harbor_reads_each_task_and_its_linter_passes_it(
    tiny: Tiny, exported: Path, harbor_view: dict[str, dict[str, Any]]
) -> None:
    for symbol in SYMBOLS:
        task = tiny.task(symbol)
        view = harbor_view[task.id]
        # Every rule, the optional ones too; images built locally have no registry digest.
        assert {finding["rule"] for finding in view["lint"]} <= {"unpinned-image"}
        assert view["name"] == f"replicate/{task.id}"
        assert view["schema_version"] == "1.4"
        assert task.prompt.strip() in view["instruction"]
        assert view["artifacts"] == [f"/app/{task.hidden.target.path}"]
        assert view["verifier_mode"] == "separate" and view["bundled_tests"] is True
        assert Path(view["verifier_dir"]).name == "tests"
        assert view["agent_network"] == view["verifier_network"] == "public"
        assert view["verifier_environment_network"] == "public"
        assert view["agent_user"] == "agent" and view["workdir"] == "/app"
        assert view["verifier_workdir"] == "/tests"  # what the verifier image has
        for part in ("environment", "tests"):  # each container's network closed by compose
            compose = (exported / task.id / part / "docker-compose.yaml").read_text()
            assert "network_mode: none" in compose
        meta = view["metadata"]
        assert meta["symbol"] == symbol and meta["commit"] == task.spec.source.commit
        assert sum(meta["strata"].values()) == meta["hidden_inputs"] == len(task.inputs)
        assert meta["body_statements"] == task.spec.body_statements


def test_the_verifier_batch_grades_alone(tiny: Tiny, exported: Path, tmp_path: Path) -> None:
    """The one-task batch under tests/ opens with its own manifest and grades: the original 1.0
    (what solve.sh puts back), the stub 0."""
    task = tiny.task(SYMBOLS[0])
    folder = exported / task.id
    batch = folder / "tests" / "batch"
    assert Batch.open(batch).ids == (task.id,)
    solution = folder / "solution" / "original.py"
    assert solution.read_bytes() == original_source(task)
    stub = tmp_path / "stub.py"
    stub.write_bytes(stubbed_source(task))
    for candidate, reward in ((solution, 1.0), (stub, 0.0)):
        done = cli("grade", "--tasks", str(batch), "--task", task.id, "--candidate",
                   str(candidate), "--sandbox", "plain")  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["reward"] == reward


def test_a_python_export_builds_as_before_without_node(tiny: Tiny, exported: Path) -> None:
    """No Node in any build context of a Python-only export (harbor_node: script tasks only)."""
    base = exported / "_images" / "replicate-verifier"
    assert sorted(p.name for p in base.iterdir()) == ["Dockerfile", "wheels"]
    assert (base / "Dockerfile").read_text() == harbor_files.verifier_base_dockerfile()
    for symbol in SYMBOLS:
        folder = exported / tiny.id_of(symbol)
        assert "node" not in (folder / "environment" / "Dockerfile").read_text()
        assert (folder / "tests" / "Dockerfile").read_text() == harbor_files.verifier_dockerfile()


def test_build_images_is_harbor_only(tiny: Tiny, tmp_path: Path) -> None:
    done = cli("export", "--tasks", str(tiny.batch_dir), "--format", "rows", "--out",
               str(tmp_path / "rows"), "--build-images")  # fmt: skip
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0


def test_a_non_empty_output_folder_is_refused(tiny: Tiny, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    done = cli("export", "--tasks", str(tiny.batch_dir), "--format", "harbor", "--out",
               str(tmp_path))  # fmt: skip
    assert done.returncode == 2 and "empty" in done.stderr
    assert (tmp_path / "keep.txt").read_text() == "mine"


def reward_json(verdict: str, tmp_path: Path) -> dict[str, object]:
    """What test.sh's last step writes for a verdict.json holding `verdict`: reward.json's
    keys (all of them rewards to Harbor) and infra.json's beside it."""
    script = harbor_files.test_script("some-task", "src/pkg/mod.py")
    program = script.split("<<'PY'\n", 1)[1].rsplit("PY\n", 1)[0]
    (tmp_path / "verdict.json").write_text(verdict, encoding="utf-8")
    subprocess.run([sys.executable, "-I", "-", str(tmp_path)], input=program, text=True, check=True)
    rewards: dict[str, object] = json.loads((tmp_path / "reward.json").read_text(encoding="utf-8"))
    assert list(rewards) == ["reward"]
    infra = json.loads((tmp_path / "infra.json").read_text(encoding="utf-8"))
    return {**rewards, **infra}


@pytest.mark.parametrize(
    ("verdict", "expected"),
    [
        ('{"status": "graded", "reward": 0.75}', {"reward": 0.75, "infra_error": False}),
        ('{"status": "infra_error", "reward": null}', {"reward": 0.0, "infra_error": True}),
        ('{"status": "graded", "reward": NaN}', {"reward": 0.0, "infra_error": True}),
        ("not json at all", {"reward": 0.0, "infra_error": True}),
        ("", {"reward": 0.0, "infra_error": True}),
    ],
)
def test_reward_json_holds_finite_numbers_only(
    verdict: str, expected: dict[str, object], tmp_path: Path
) -> None:
    assert reward_json(verdict, tmp_path) == expected


def test_a_locked_repository_gets_its_dependencies_in_the_agent_image(
    tiny: Tiny, tmp_path: Path
) -> None:
    """With a lock, the agent's Dockerfile installs it offline from environment/wheels/ (what
    --build-images fills); Harbor's linter still passes the task."""
    batch = tiny.copy_batch(tmp_path / "batch")
    for record in (batch / "reference_impls" / "_repos").glob("*/repo.json"):
        data = json.loads(record.read_text(encoding="utf-8"))
        record.write_text(json.dumps({**data, "lock": ["six==1.17.0"]}), encoding="utf-8")
    out = tmp_path / "out"
    done = cli("export", "--tasks", str(batch), "--no-verify", "--format", "harbor", "--out",
               str(out), "--task", SYMBOLS[0])  # fmt: skip
    assert done.returncode == 0, done.stderr
    environment = out / tiny.id_of(SYMBOLS[0]) / "environment"
    assert (environment / "requirements.txt").read_text() == "six==1.17.0\n"
    assert (environment / "wheels").is_dir()
    dockerfile = (environment / "Dockerfile").read_text()
    assert "--no-index" in dockerfile and "-r /opt/replicate-env/requirements.txt" in dockerfile
    python = harbor_python()
    if python is None:
        pytest.skip("no Harbor venv (Python 3.12): run scripts/install.sh --dev")
    check = [str(python), str(CHECK), str(environment.parent)]
    view = json.loads(subprocess.run(check, capture_output=True, text=True, check=True).stdout)
    assert {finding["rule"] for finding in view["lint"]} <= {"unpinned-image"}
