"""tests/once.py under real pytest-xdist workers: a session fixture made through `once` does its
work once per run, whatever the workers; a plain session fixture (the control) once per worker."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("xdist")

REPO_ROOT = Path(__file__).resolve().parents[2]

CONFTEST = """
import os
from pathlib import Path

import pytest

from tests.once import once

COUNTER = Path(os.environ["ONCE_COUNTER"])


def _work(folder):
    with COUNTER.open("a") as handle:
        handle.write(os.environ.get("PYTEST_XDIST_WORKER", "main") + "\\n")
    (folder / "made").write_text("made")
    return {"folder": str(folder)}


@pytest.fixture(scope="session")
def shared(tmp_path_factory):
    if os.environ.get("ONCE_PLAIN"):
        return _work(tmp_path_factory.mktemp("plain"))
    return once(tmp_path_factory, "shared", _work)
"""

TEST = """
import time
from pathlib import Path


def test_reads_what_was_made(shared):
    time.sleep(0.5)  # the other worker takes a file meanwhile
    assert Path(shared["folder"], "made").read_text() == "made"
"""


def run(tmp_path: Path, *, plain: bool) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    project = tmp_path / ("plain" if plain else "once")
    project.mkdir()
    (project / "conftest.py").write_text(CONFTEST)
    for n in range(4):
        (project / f"test_{n}.py").write_text(TEST)
    counter = project / "counter.txt"
    env = {"PYTHONPATH": str(REPO_ROOT), "ONCE_COUNTER": str(counter), "PATH": "/usr/bin:/bin"}
    if plain:
        env["ONCE_PLAIN"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadfile",
         "-p", "no:cacheprovider", "--basetemp", str(project / "tmp"), str(project)],
        capture_output=True, text=True, timeout=300, env=env, cwd=project, check=False,
    )  # fmt: skip
    return done, counter.read_text().split() if counter.is_file() else []


def test_plain_session_fixtures_run_once_per_worker(tmp_path: Path) -> None:
    done, made_by = run(tmp_path, plain=True)
    assert done.returncode == 0, done.stdout[-2000:]
    assert sorted(made_by) == ["gw0", "gw1"]  # the control: the work is done twice


def test_once_does_the_work_once_for_every_worker(tmp_path: Path) -> None:
    done, made_by = run(tmp_path, plain=False)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "4 passed" in done.stdout and len(made_by) == 1, (made_by, done.stdout[-2000:])
