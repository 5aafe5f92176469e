from __future__ import annotations

from pathlib import Path

import pytest

from replicate.sandbox import Mount, SandboxRequest
from replicate.sandbox.plain import PlainSandbox


def request(*mounts: Mount, cwd: str = "/") -> SandboxRequest:
    return SandboxRequest(
        argv=("/bin/sh", "-c", "pwd; ls"), env={}, cwd=cwd, timeout_s=10, mounts=mounts
    )


def test_remapped_mount_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot show"):
        PlainSandbox().run(request(Mount(str(tmp_path), "/data")))


def test_same_path_mounts_need_nothing(tmp_path: Path) -> None:
    (tmp_path / "marker").write_text("")
    result = PlainSandbox().run(request(Mount.same(str(tmp_path)), cwd=str(tmp_path)))
    assert result.stdout == f"{tmp_path}\nmarker\n".encode()
    assert (result.exit_code, result.timed_out) == (0, False)


def test_sees_the_host(tmp_path: Path) -> None:
    # no isolation: a path nobody mounted is visible
    (tmp_path / "host-file").write_text("host\n")
    result = PlainSandbox().run(
        SandboxRequest(argv=("/bin/cat", str(tmp_path / "host-file")), env={}, cwd="/", timeout_s=5)
    )
    assert result.stdout == b"host\n"
