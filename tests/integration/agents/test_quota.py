"""The workspace quota's tmpfs: mounted and released, and enforced by every isolating backend."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from replicate.agents.quota import workspace_quota
from replicate.sandbox.base import Mount, Sandbox, SandboxRequest, SandboxUnavailable
from replicate.sandbox.docker import DockerSandbox

QUOTA_MB = 8
WRITE = "dd if=/dev/zero of=big bs=1M count=20 2>&1"  # 20 MiB: past the quota


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "work"
    with workspace_quota(folder, QUOTA_MB) as quota:
        if not quota.enforced:
            pytest.skip("this process may not mount a tmpfs (needs CAP_SYS_ADMIN)")
        yield folder
    assert not os.path.ismount(folder)


def _write(box: Sandbox, folder: Path) -> tuple[int | None, str]:
    request = SandboxRequest(
        argv=("/bin/sh", "-c", WRITE),
        env={"PATH": "/usr/bin:/bin"},
        cwd=str(folder),
        timeout_s=60,
        mounts=(Mount.same(str(folder), writable=True),),
    )
    result = box.run(request)
    return result.exit_code, (result.stdout + result.stderr).decode()


def _docker() -> DockerSandbox:
    try:
        return DockerSandbox()
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))


def test_the_quota_is_a_capped_tmpfs_released_afterwards(work: Path) -> None:
    info = os.statvfs(work)
    assert os.path.ismount(work)
    assert info.f_blocks * info.f_frsize == QUOTA_MB << 20


def test_local_sandbox_hits_the_quota(work: Path, local_sandbox: Sandbox) -> None:
    code, said = _write(local_sandbox, work)
    assert code == 1 and "No space left on device" in said, said


@pytest.mark.skipif(os.geteuid() != 0, reason="the docker backend lends mounts as root only")
def test_docker_sandbox_hits_the_quota(work: Path) -> None:
    code, said = _write(_docker(), work)
    assert code == 1 and "No space left on device" in said, said


@pytest.mark.skipif(os.geteuid() != 0, reason="the docker backend lends mounts as root only")
def test_docker_writes_past_it_without_the_quota(tmp_path: Path) -> None:
    """The positive control: the same write in a plain folder succeeds."""
    assert _write(_docker(), tmp_path)[0] == 0


def test_a_stale_mount_is_released_before_reuse(tmp_path: Path) -> None:
    folder = tmp_path / "work"
    with workspace_quota(folder, QUOTA_MB) as outer:
        if not outer.enforced:
            pytest.skip("this process may not mount a tmpfs (needs CAP_SYS_ADMIN)")
        (folder / "left").write_text("by a killed run")
        with workspace_quota(folder, QUOTA_MB) as inner:  # as the next run would
            assert inner.enforced and not (folder / "left").exists()
    assert not os.path.ismount(folder)
