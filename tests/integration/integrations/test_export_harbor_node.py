"""`replicate export --format harbor` of a JavaScript task: the build contexts carry what the
grader needs in the verifier's container (`exporters.harbor_node`): the host's node and the jail's
wrapper around it, the pinned npm tools and the repository's installed npm dependencies, under
the key the one-task batch's tree gives (the same key inside the image); the agent's context gets
node and the dependencies too.  A node that links more than glibc and libstdc++ is refused in one
line.  (Built and graded by Harbor: tests/e2e/test_harbor_run_script.py.)"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from replicate.batch import Batch
from replicate.exporters import harbor_files, harbor_node
from replicate.jail import node_deps
from replicate.jail.node import node_binary
from tests.integration.languages.test_npm_deps_grading import _repo
from tests.integration.minted import REPO_ROOT, run_cli

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is missing")


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CommonJS repository whose target requires its one npm dependency (a `file:` one:
    installed offline), minted without the strength pass."""
    root = tmp_path_factory.mktemp("harbor-node")
    out = root / "batch"
    done = run_cli("gen", "--repo", str(_repo(root, "commonjs")), "--out", str(out),
                   "--no-strength", timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def export(batch: Path, out: Path, path: str = "") -> subprocess.CompletedProcess[str]:
    """`replicate export --format harbor` of the batch; `path`: PATH to run it with."""
    argv = [
        sys.executable,
        "-m",
        "replicate",
        "export",
        "--tasks",
        str(batch),
        "--format",
        "harbor",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), **({"PATH": path} if path else {})}
    return subprocess.run(
        [*argv, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )


def test_the_build_contexts_carry_node_the_tools_and_the_dependencies(
    batch: Path, tmp_path: Path
) -> None:
    if harbor_node.foreign_libraries(node_binary()):
        pytest.skip("this machine's node is not self-contained: the export refuses it (below)")
    out = tmp_path / "out"
    done = export(batch, out)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr, done.stderr  # nothing left that Harbor cannot grade
    base = out / "_images" / "replicate-verifier"
    assert filecmp.cmp(base / "node" / "node", node_binary(), shallow=False)
    wrapper = (base / "node" / "jail-node.sh").read_text()
    assert (
        f"exec setpriv --reuid=65534 --regid=65534 --clear-groups {harbor_node.NODE_IN_IMAGE}"
        in wrapper
    )
    for tool in harbor_node.TOOLS:
        manifest = base / "node-tools" / tool.spec / "node_modules" / tool.package / "package.json"
        assert json.loads(manifest.read_text())["version"] == tool.version
    assert (base / "Dockerfile").read_text() == harbor_files.verifier_base_dockerfile(
        harbor_node.base_lines()
    )
    (task_id,) = Batch.open(batch).ids
    folder = out / task_id
    # the key the grader computes in the image: from the one-task batch's tree, copied there
    tree = Batch.open(folder / "tests" / "batch").load(task_id).repo.tree
    (deps,) = (folder / "tests" / "node-deps").iterdir()
    assert deps.name == node_deps.deps_key(tree)
    assert (deps / node_deps.SHOWN).is_file()
    assert (deps / "node_modules" / "scale-helper" / "index.js").is_file()
    assert (folder / "environment" / "node_modules" / "scale-helper" / "index.js").is_file()
    verifier = (folder / "tests" / "Dockerfile").read_text()
    assert f"FROM {harbor_node.VERIFIER_NODE_IMAGE}\nCOPY node-deps/" in verifier
    agent = (folder / "environment" / "Dockerfile").read_text()
    assert f"COPY --from={harbor_node.VERIFIER_NODE_IMAGE} {harbor_node.NODE_IN_IMAGE}" in agent
    assert "COPY node_modules/ /app/node_modules/" in agent


def test_a_node_that_links_more_is_refused(batch: Path, tmp_path: Path) -> None:
    linked = Path(shutil.which("git") or "/usr/bin/git")  # links libz and libpcre2
    assert harbor_node.foreign_libraries(linked)
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "node").symlink_to(linked)
    done = export(batch, tmp_path / "out", f"{shim}:{os.environ['PATH']}")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().count("\n") == 0 and "self-contained node" in done.stderr
    # the control: a self-contained node is taken (the test above)


def test_dependencies_that_cannot_install_are_said_not_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    tree = tmp_path / "tree"
    tree.mkdir()
    missing = {"dependencies": {"gone": f"file:{tmp_path / 'gone'}"}}
    (tree / "package.json").write_text(json.dumps({"name": "t", **missing}))
    why = harbor_node.installed_deps(tree)
    assert isinstance(why, str) and why.startswith("npm install"), why
    (warning,) = harbor_node.deps_warnings([("t", why)])
    assert warning.startswith("t: its npm dependencies are not in the images")
    # the control: the same tree without the dependency declares none, so nothing is wanting
    (tree / "package.json").write_text(json.dumps({"name": "t"}))
    assert harbor_node.installed_deps(tree) is None
