"""The workspace's disk quota, by `run_batch` with the local sandbox: a tmpfs the agent fills."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from replicate.agents import quota
from replicate.agents.protocol import AgentConfig
from replicate.agents.quota import mount_tmpfs
from replicate.sandbox import get_sandbox
from replicate.scoring.batch_run import RunOptions, RunSummary, run_batch
from replicate.scratch import unmount
from tests.integration.minted import Tiny

CLAMP = "tinypkg.core.clamp"
QUOTA_MB = 64
# three files of 300 MiB each: far past the quota (each stays under the 1 GiB RLIMIT_FSIZE)
FLOOD = "for i in 1 2 3; do dd if=/dev/zero of=big$i bs=1M count=300 2>&1 || exit 1; done"
# one file of 80 MiB: past the quota, cheap enough to really write without one
PAST = "dd if=/dev/zero of=big bs=1M count=80 && test $(stat -c %s big) -eq $((80 << 20))"
MARGIN = 16 << 20


def _can_mount(tmp_path: Path) -> bool:
    point = tmp_path / "probe"
    point.mkdir()
    if not mount_tmpfs(point, 1):
        return False
    unmount(point)
    return True


@pytest.fixture
def mounts(tmp_path: Path) -> None:
    if not _can_mount(tmp_path):
        pytest.skip("this process may not mount a tmpfs (needs CAP_SYS_ADMIN)")


def _run(tiny: Tiny, out: Path, command: str, quota: int | None, keep: bool = False) -> RunSummary:
    agent = AgentConfig(command, get_sandbox("local"), timeout_s=120, disk_quota_mb=quota)
    options = RunOptions(
        tasks=tiny.batch_dir,
        out=out,
        agent=agent,
        sandbox_name="local",
        task_ids=(CLAMP,),
        keep_workspaces=keep,
    )
    return run_batch(options)


def _free(path: Path) -> int:
    info = os.statvfs(path)
    return info.f_bavail * info.f_frsize


def _workspaces(out: Path) -> list[Path]:
    folder = out / "workspaces"
    return sorted(folder.iterdir()) if folder.exists() else []


def test_flooding_the_workspace_is_disk_quota_exceeded(
    tiny: Tiny, tmp_path: Path, mounts: None
) -> None:
    out = tmp_path / "run"
    before = _free(tmp_path)
    row = _run(tiny, out, FLOOD, QUOTA_MB).rows[0]
    after = _free(tmp_path)
    assert row.agent_status == "disk_quota_exceeded", row
    assert row.agent_exit_code == 1
    assert row.reason.startswith("agent: disk quota exceeded; ")
    assert (row.status, row.reward) == ("graded", 0.0)  # still graded from what it left
    assert _workspaces(out) == []
    assert abs(before - after) < MARGIN, (before, after)


def test_a_full_workspace_counts_even_when_the_agent_exits_zero(
    tiny: Tiny, tmp_path: Path, mounts: None
) -> None:
    quiet = "for i in 1 2 3; do dd if=/dev/zero of=big$i bs=1M count=300 2>/dev/null; done; true"
    row = _run(tiny, tmp_path / "run", quiet, QUOTA_MB).rows[0]  # nothing said: the free space
    assert (row.agent_status, row.agent_exit_code) == ("disk_quota_exceeded", 0)


def test_without_a_quota_the_same_write_succeeds(tiny: Tiny, tmp_path: Path) -> None:
    """The positive control: only the quota stops an 80 MiB file."""
    row = _run(tiny, tmp_path / "run", PAST, None).rows[0]
    assert (row.agent_status, row.agent_exit_code) == ("ok", 0), row


def test_the_same_write_fails_under_the_quota(tiny: Tiny, tmp_path: Path, mounts: None) -> None:
    row = _run(tiny, tmp_path / "run", PAST, QUOTA_MB).rows[0]
    assert row.agent_status == "disk_quota_exceeded", row


def test_a_kept_workspace_leaves_the_mount(tiny: Tiny, tmp_path: Path, mounts: None) -> None:
    out = tmp_path / "run"
    row = _run(tiny, out, "echo kept > note", QUOTA_MB, keep=True).rows[0]
    assert row.agent_status == "ok"
    [kept] = _workspaces(out)
    assert not os.path.ismount(kept)
    assert (kept / "note").read_text() == "kept\n"
    assert (kept / ".git").is_dir()


def test_where_mounting_is_refused_the_quota_is_checked_afterwards(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No CAP_SYS_ADMIN (simulated): the write lands on the host disk, and is recorded."""
    monkeypatch.setattr(quota, "mount_tmpfs", lambda path, megabytes: False)
    row = _run(tiny, tmp_path / "run", PAST, QUOTA_MB).rows[0]
    assert (row.agent_status, row.agent_exit_code) == ("disk_quota_exceeded", 0), row
    assert _run(tiny, tmp_path / "small", "true", QUOTA_MB).rows[0].agent_status == "ok"
