"""A tiny synthetic repository minted once per session through the real pipeline (the CLI).

`tinypkg` (src layout) has a plain function (`clamp`), one that raises ValueError (`parse_int`), a
generator (`evens`) and a method with state (`Counter.add`); its tests call each several times.
One function (`shout`, `DROPPED`) no test calls: gen drops it, and says so in the funnel.
The fixtures here are re-exported by tests/integration/conftest.py; tests must never write into the
minted batch (copy it first) nor into the committed batch at the repository root.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from replicate.batch.store import Batch, LoadedTask
from replicate.cache import cache_root
from replicate.core.records import Funnel
from replicate.jail.calls import RepoContext
from replicate.jail.context import context_for
from replicate.sandbox import get_sandbox
from replicate.sandbox.base import Sandbox
from tests.once import once

REPO_ROOT = Path(__file__).resolve().parents[2]
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}

CORE = '''"""Tiny functions for the unit tests."""


def clamp(value, low, high):
    """Clamp value into [low, high]."""
    if value < low:
        return low
    if value > high:
        return high
    return value


def parse_int(text):
    """Parse a decimal integer; raise ValueError on junk."""
    text = text.strip()
    if not text or not text.lstrip("-").isdigit():
        raise ValueError(f"not an integer: {text!r}")
    return int(text)


def evens(limit):
    """Yield the even numbers below limit."""
    for n in range(limit):
        if n % 2 == 0:
            yield n


class Counter:
    def __init__(self, start=0):
        self.total = start

    def add(self, amount):
        """Add amount and return the new total."""
        self.total += amount
        return self.total


def shout(text):
    """Upper-case text and add an exclamation mark."""
    return text.upper() + "!"
'''

TESTS = """import pytest

from tinypkg import Counter, clamp, evens, parse_int


def test_clamp():
    assert clamp(5, 0, 10) == 5
    assert clamp(-3, 0, 10) == 0
    assert clamp(12, 0, 10) == 10
    assert clamp(2.5, 1.0, 2.0) == 2.0


def test_parse_int():
    assert parse_int("12") == 12
    assert parse_int(" -7 ") == -7
    with pytest.raises(ValueError):
        parse_int("x1")
    with pytest.raises(ValueError):
        parse_int("")


def test_evens():
    assert list(evens(5)) == [0, 2, 4]
    assert list(evens(0)) == []
    assert list(evens(9)) == [0, 2, 4, 6, 8]


def test_counter():
    c = Counter()
    assert c.add(2) == 2
    assert c.add(3) == 5
    assert Counter(10).add(-4) == 6
"""

FILES = {
    "pyproject.toml": '[project]\nname = "tinypkg"\nversion = "0.1.0"\n',
    "src/tinypkg/__init__.py": (
        "from tinypkg.core import Counter, clamp, evens, parse_int\n\n"
        '__all__ = ["Counter", "clamp", "evens", "parse_int"]\n'
    ),
    "src/tinypkg/core.py": CORE,
    "tests/test_core.py": TESTS,
}
CORE_PATH = "src/tinypkg/core.py"
DROPPED = "tinypkg.core.shout"  # extracted, never called by the tests
SYMBOLS = (
    "tinypkg.core.Counter.add",
    "tinypkg.core.clamp",
    "tinypkg.core.evens",
    "tinypkg.core.parse_int",
)
# The class target `tinypkg.core.Counter` is dropped at traced: of its methods only `add` is
# minted as a method task (`__init__`'s task is not), and a class task needs two.
TARGETS = 6  # SYMBOLS, DROPPED and the class
TOO_FEW_MEMBERS = "fewer than 2 of its methods minted as method tasks"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env={**os.environ, **GIT_IDENTITY},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def write_files(root: Path, files: Mapping[str, str | bytes]) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return root


def make_git_repo(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """A fresh git repository at `root` holding `files` in one commit."""
    write_files(root, files)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


@dataclass(frozen=True)
class Tiny:
    repo: Path
    batch_dir: Path
    gen: subprocess.CompletedProcess[str]  # `replicate gen --json` that minted it
    funnel: Funnel
    task_ids: tuple[str, ...]
    batch: Batch

    def id_of(self, symbol: str) -> str:
        return self.batch.resolve(symbol)

    def task(self, symbol: str) -> LoadedTask:
        return self.batch.load(symbol)

    def copy_batch(self, dest: Path) -> Path:
        """A private, writable copy of the minted batch."""
        shutil.copytree(self.batch_dir, dest, symlinks=True)
        return dest


def run_cli(
    *args: str, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`python -m replicate ARGS` in a subprocess, with this checkout's package first on the
    path (whatever the editable install points at)."""
    return subprocess.run(
        [sys.executable, "-m", "replicate", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        check=False,
    )


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Tiny:
    """The tiny repository minted once per test run (tests/once.py: however many workers)."""

    def work(root: Path) -> dict[str, Any]:
        repo = make_git_repo(root / "tinyrepo", FILES)
        out = root / "batch"
        command = ("gen", "--repo", str(repo), "--out", str(out), "--json", "--workers", "2")
        done = run_cli(*command, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        return {"root": str(root), "args": done.args, "stdout": done.stdout, "stderr": done.stderr}

    record = once(tmp_path_factory, "tiny", work)
    root = Path(record["root"])
    done = subprocess.CompletedProcess(record["args"], 0, record["stdout"], record["stderr"])
    payload = json.loads(done.stdout)
    tasks = tuple(payload.pop("tasks"))
    funnel = Funnel.model_validate(payload)
    out = root / "batch"
    return Tiny(root / "tinyrepo", out, done, funnel, tasks, Batch.open(out))


@pytest.fixture(scope="session")
def local_sandbox() -> Sandbox:
    return get_sandbox("local")


@pytest.fixture(scope="session")
def tiny_ctx(tiny: Tiny) -> RepoContext:
    """The jail context of the tiny repository (its environment comes from the cache)."""
    return context_for(tiny.task(SYMBOLS[1]).repo, cache_root())


@pytest.fixture(scope="session")
def tiny_task(tiny: Tiny) -> Callable[[str], LoadedTask]:
    return tiny.task
