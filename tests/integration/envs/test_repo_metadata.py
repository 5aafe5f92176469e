"""A repository's declared project name and version are checked before they name a file.

gen writes `<name>-<version>.dist-info/` (METADATA, entry_points.txt) beside the snapshot, on the
host and outside any sandbox, from the `[project]` table of the repository's pyproject.toml.  A
version such as `0.1/../../../escaped` (or a name that is an absolute path) put a `.dist-info`
folder with entry points of the repository's choosing anywhere writable.  Each test first shows
the write landing outside the batch with the defences taken out (the positive control), then
that gen refuses the repository in one line, and that each defence holds without the other.
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from replicate import confined
from replicate.core import NullProgress
from replicate.envs import prepare as env_prepare
from replicate.errors import ReplicateError
from replicate.gen import prepare as gen_prepare
from tests.integration.minted import FILES, make_git_repo, run_cli

CLIMB = "0.1/" + "../" * 6 + "escaped"  # from <batch>/reference_impls/_repos/<r>/meta/<n>-0.1
ENTRY = "[project.scripts]\nplanted = 'os:system'\n"


class _Stop(Exception):
    """Ends `prepare_repo` once the metadata is written (the environment is not the point)."""


def _repo(tmp_path: Path, name: str, version: str) -> Path:
    pyproject = f"[project]\nname = {name!r}\nversion = {version!r}\n{ENTRY}"
    return make_git_repo(tmp_path / "repo", {**FILES, "pyproject.toml": pyproject})


def _naive_write(root: Path, relpath: str, data: bytes) -> None:
    """How the metadata was written before confinement: a plain join."""
    (root / relpath).parent.mkdir(parents=True, exist_ok=True)
    (root / relpath).write_bytes(data)


def _without(monkeypatch: pytest.MonkeyPatch, *, check: bool, confine: bool) -> None:
    """Take out the name and version check, the confined write, or both."""
    if not check:
        monkeypatch.setattr(env_prepare, "check_metadata", lambda name, version: None)
        monkeypatch.setattr(gen_prepare, "check_metadata", lambda name, version: None)
    if not confine:
        naive = types.SimpleNamespace(
            write_bytes=_naive_write, ConfinementError=confined.ConfinementError
        )
        monkeypatch.setattr(env_prepare, "confined", naive)

    def stop(*args: object, **kwargs: object) -> None:
        raise _Stop

    monkeypatch.setattr(gen_prepare, "resolve_lock", stop)


def _prepare(repo: Path, out: Path) -> None:
    gen_prepare.prepare_repo(str(repo), None, out, False, NullProgress())


def test_a_climbing_version_writes_outside_the_batch_without_the_defences(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path, "tinypkg", CLIMB)
    _without(monkeypatch, check=False, confine=False)
    with pytest.raises(_Stop):
        _prepare(repo, tmp_path / "batch")
    planted = tmp_path / "escaped.dist-info" / "entry_points.txt"
    assert planted.is_file() and "planted = os:system" in planted.read_text()


@pytest.mark.parametrize("check", [True, False], ids=["checked", "confined-only"])
def test_a_climbing_version_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, check: bool
) -> None:
    repo = _repo(tmp_path, "tinypkg", CLIMB)
    _without(monkeypatch, check=check, confine=True)
    with pytest.raises(ReplicateError) as raised:
        _prepare(repo, tmp_path / "batch")
    assert not isinstance(raised.value, _Stop)
    assert "\n" not in str(raised.value)
    assert not (tmp_path / "escaped.dist-info").exists()


def test_the_check_alone_refuses_a_climbing_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path, "tinypkg", CLIMB)
    _without(monkeypatch, check=True, confine=False)
    with pytest.raises(ReplicateError, match="not a PEP 440 version"):
        _prepare(repo, tmp_path / "batch")
    assert not (tmp_path / "escaped.dist-info").exists()


@pytest.mark.parametrize(
    ("name", "version", "said"),
    [
        ("tinypkg", CLIMB, "project version '0.1/../"),
        ("/tmp/x", "0.1.0", "project name '/tmp/x' is not a valid distribution name"),
        ("tinypkg", '0.1"\nimport os #', "is not a PEP 440 version"),
    ],
)
def test_gen_refuses_the_repository_in_one_line(
    tmp_path: Path, name: str, version: str, said: str
) -> None:
    repo = _repo(tmp_path, name, version)
    done = run_cli("gen", "--repo", str(repo), "--out", str(tmp_path / "batch"), "--no-strength")
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "escaped.dist-info").exists()
    assert not list((tmp_path / "batch").rglob("*.dist-info"))


def test_a_version_file_gets_no_injected_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other writer the version reaches: a build backend's version file, whose text is the
    version inside a Python string."""
    root = tmp_path / "tree"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.setuptools_scm]\nwrite_to = "pkg/_version.py"\n')
    injected = '1"; import os; os.system("true") #'
    with pytest.raises(ReplicateError, match="not a PEP 440 version"):
        env_prepare.prepare_tree(root, "pkg", injected)
    assert not (root / "pkg" / "_version.py").exists()
    # The control: without the check, the repository's "version" is a statement of the file.
    monkeypatch.setattr(env_prepare, "check_metadata", lambda name, version: None)
    env_prepare.prepare_tree(root, "pkg", injected)
    assert 'os.system("true")' in (root / "pkg" / "_version.py").read_text()
