"""The cache's folders built beside their final place: what a killed build left is removed."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from replicate.acquire import pypi
from replicate.cache import file_lock, staging_beside


def test_a_build_s_leftovers_are_removed_and_others_kept(tmp_path: Path) -> None:
    dest = tmp_path / "tool-1.0"
    stale = tmp_path / "tool-1.0.tmp-abc123"
    (stale / "downloads").mkdir(parents=True)
    (stale / "downloads" / "tool-1.0.tar.gz").write_bytes(b"half")
    others = [tmp_path / "tool-1.01.tmp-x", tmp_path / "tool-1.0", tmp_path / "tool-1x0.tmp-y"]
    for other in others:
        other.mkdir()
    staging = staging_beside(dest)
    assert not stale.exists()
    assert all(other.is_dir() for other in others)
    assert staging.is_dir() and staging.parent == tmp_path and not any(staging.iterdir())
    assert staging.name.startswith("tool-1.0.tmp-")


def _sdist(folder: str) -> bytes:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as tar:
        body = b"def f():\n    return 1\n"
        info = tarfile.TarInfo(f"{folder}/tool.py")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    return data.getvalue()


def test_an_sdist_download_killed_midway_leaves_nothing_behind_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "sdists"
    killed = root / "tool-1.0.tmp-killed"
    (killed / "downloads").mkdir(parents=True)  # what a SIGKILL during pip download left

    def download(name: str, version: str, into: Path) -> Path:
        into.mkdir()
        archive = into / f"{name}-{version}.tar.gz"
        archive.write_bytes(_sdist(f"{name}-{version}"))
        return archive

    monkeypatch.setattr(pypi, "_download", download)
    repo = pypi.sdist_repo("tool", "1.0", root)
    assert (repo / "tool.py").is_file() and (repo / ".git").is_dir()
    assert sorted(p.name for p in root.iterdir()) == ["tool-1.0", "tool-1.0.lock"]
    with file_lock(root / "tool-1.0.lock"):  # the lock is free again
        pass
