"""`replicate export --format harbor --build-images`: every image of an export, built offline.

1. the wheelhouse of the shared verifier image, on the host: this package (from its checkout, or
   `replicate-rl==VERSION` from the index pip is configured with), its dependencies, pip, and the
   pinned lock of every exported repository (`pip wheel`);
2. `replicate-verifier:VERSION` from `_images/replicate-verifier/` (`:VERSION-node` for an export
   with JavaScript/TypeScript tasks: `harbor_node`);
3. per task, the agent's image and the verifier's, tagged `replicate-task/<id>:agent` and
   `:verifier` (lower case).

Every build runs with no network (`network_mode="none"`) FROM the base image of
scripts/docker-setup.sh.  The wheels are for this interpreter, which must be the base image's
(a Debian python3 of the same minor version) — as the batch's environments already require.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import replicate
from replicate import __version__
from replicate.batch import Batch
from replicate.errors import InfraError

WHEEL_TIMEOUT_S = 1800
BUILD_TIMEOUT_S = 1800


def task_tags(task_id: str) -> tuple[str, str]:
    """The agent's and the verifier's image tags of one task."""
    repo = f"replicate-task/{task_id.lower()}"
    return f"{repo}:agent", f"{repo}:verifier"


def package_source() -> str:
    """This package's checkout when it runs from one, else its release on the index."""
    root = Path(replicate.__file__).resolve().parents[1]
    return str(root) if (root / "pyproject.toml").is_file() else f"replicate-rl=={__version__}"


def pip_wheel(wheels: Path, what: Sequence[str], *, deps: bool = True) -> None:
    """`pip wheel` of `what` into `wheels`, on the host; one line on failure."""
    argv = [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check"]
    argv += ["--wheel-dir", str(wheels), *([] if deps else ["--no-deps"]), *what]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=WHEEL_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise InfraError(f"pip wheel took longer than {WHEEL_TIMEOUT_S}s") from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise InfraError(f"cannot build the wheelhouse {wheels}: {last}")


def fill_wheelhouse(wheels: Path, lock: Sequence[str]) -> None:
    """pip, this package with its dependencies, and the repositories' locks, as wheels."""
    pip_wheel(wheels, ["pip", package_source(), *lock])


def build(context: Path, tag: str) -> None:
    """`docker build` of `context`, offline, tagged `tag`; one line on failure."""
    import docker
    import docker.errors

    try:
        client = docker.from_env(timeout=BUILD_TIMEOUT_S)
        client.images.build(path=str(context), tag=tag, rm=True, pull=False, network_mode="none")
    except docker.errors.BuildError as exc:
        raise InfraError(f"cannot build {tag}: {str(exc).splitlines()[0]}") from exc
    except docker.errors.DockerException as exc:
        raise InfraError(f"cannot build {tag}: {exc}") from exc


def build_all(batch: Batch, task_dirs: Sequence[Path], base: Path, base_tag: str) -> list[str]:
    """Fill the wheelhouse and build every image, the verifier base tagged `base_tag`; the tags
    built, in order."""
    locks = sorted({line for snapshot in batch.repos() for line in snapshot.record.lock})
    fill_wheelhouse(base / "wheels", locks)
    build(base, base_tag)
    tags = [base_tag]
    for folder in task_dirs:
        agent, verifier = task_tags(folder.name)
        requirements = folder / "environment" / "requirements.txt"
        if requirements.is_file():  # the agent image's own wheelhouse: pip and the lock
            pip_wheel(
                folder / "environment" / "wheels", ["pip", "-r", str(requirements)], deps=False
            )
        build(folder / "environment", agent)
        build(folder / "tests", verifier)
        tags += [agent, verifier]
    return tags
