"""An sdist from PyPI is a stranger's archive: a member that would land outside the folder it
is unpacked into is refused in one line (tarfile's `data` filter), never written."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from replicate.acquire.pypi import unpack
from replicate.errors import ReplicateError


def _sdist(path: Path, member: str) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name in ("pkg-1.0/setup.py", member):
            info = tarfile.TarInfo(name)
            info.size = 2
            tar.addfile(info, io.BytesIO(b"x\n"))
    return path


def test_a_member_that_climbs_out_is_refused_in_one_line(tmp_path: Path) -> None:
    archive = _sdist(tmp_path / "pkg-1.0.tar.gz", "pkg-1.0/../../escaped.txt")
    with tarfile.open(archive) as tar:  # the control: a plain extraction writes outside
        tar.extractall(tmp_path / "plain", filter="fully_trusted")
    assert (tmp_path / "escaped.txt").is_file()
    (tmp_path / "escaped.txt").unlink()
    with pytest.raises(ReplicateError, match="unsafe or broken archive") as raised:
        unpack(archive, tmp_path / "into")
    assert "\n" not in str(raised.value)
    assert not (tmp_path / "escaped.txt").exists()
