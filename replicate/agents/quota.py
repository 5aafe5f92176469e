"""A total disk quota for an agent's workspace: a size-capped tmpfs mounted at the workspace.

`workspace_quota` mounts the tmpfs at the (empty) workspace folder before the workspace is made,
so the tree's copy, its git repository and everything the agent writes count against one cap; an
agent that reaches it gets ENOSPC, as on a full disk, and nothing reaches the host's disk.  Every
backend sees the quota: bwrap and docker bind the workspace folder, which is the mount itself.
Afterwards the tmpfs is unmounted (lazily when busy), also on errors; with `keep`, its content is
first copied to the host folder (the kept workspace is then outside the quota).

The agent is judged to have exceeded the quota when, at its end, less than `FULL_MARGIN_BYTES`
(or no inode) is left, or when it failed and its output's tail names ENOSPC/EDQUOT.

Mounting needs CAP_SYS_ADMIN (root, the CI case).  Where it is refused the workspace is a plain
folder on the host's disk with no total cap, only the per-file RLIMIT_FSIZE of `AGENT_LIMITS`
(`WorkspaceQuota.enforced` is False): the quota is then checked after the fact, on the size of
what the agent left, so it is recorded but not prevented (a file written and deleted escapes it).
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from replicate import scratch
from replicate.agents.protocol import AgentOutcome
from replicate.core import AgentStatus

FULL_MARGIN_BYTES = 1 << 20
INODES_PER_MB = 256  # a tmpfs inode costs memory the size cap does not count
NO_SPACE_MESSAGES = ("No space left on device", "Disk quota exceeded")
EXCEEDED: AgentStatus = "disk_quota_exceeded"


@dataclass(frozen=True)
class WorkspaceQuota:
    path: Path
    megabytes: int | None
    enforced: bool

    def exceeded(self, outcome: AgentOutcome) -> bool:
        """Did the agent run into the quota (see the module docstring)?"""
        if not self.enforced:
            return self.megabytes is not None and _tree_bytes(self.path) > self.megabytes << 20
        if _is_full(self.path):
            return True
        failed = outcome.status != "ok"
        return failed and any(text in outcome.log_tail for text in NO_SPACE_MESSAGES)

    def judge(self, outcome: AgentOutcome) -> AgentOutcome:
        """`outcome`, its status `disk_quota_exceeded` when the agent reached the quota."""
        if self.exceeded(outcome):
            return dataclasses.replace(outcome, status=EXCEEDED)
        return outcome


@contextlib.contextmanager
def workspace_quota(
    path: Path, megabytes: int | None, *, keep: bool = False
) -> Iterator[WorkspaceQuota]:
    """Mount a tmpfs of `megabytes` at `path` (created empty) for the body of the `with`."""
    release_stale(path)
    path.mkdir(parents=True, exist_ok=True)
    enforced = megabytes is not None and mount_tmpfs(path, megabytes)
    if enforced:
        scratch.register(str(path), lambda: release_stale(path))
    try:
        yield WorkspaceQuota(path, megabytes, enforced)
    finally:
        if enforced:
            _release(path, keep)


def release_stale(path: Path) -> None:
    """A mount left at `path` by an earlier process (killed before it could unmount)."""
    while os.path.ismount(path) and scratch.unmount(path):
        pass


def mount_tmpfs(path: Path, megabytes: int) -> bool:
    """Mount a tmpfs of `megabytes` (inodes in proportion) at `path`; False when refused."""
    source = f"{scratch.MOUNT_SOURCE_PREFIX}{scratch.owner_token()}"
    options = f"size={megabytes}m,nr_inodes={max(1024, megabytes * INODES_PER_MB)},mode=0755"
    libc = ctypes.CDLL(None, use_errno=True)
    done = libc.mount(source.encode(), os.fsencode(path), b"tmpfs", 0, options.encode())
    return bool(done == 0)


def _release(path: Path, keep: bool) -> None:
    kept = path.with_name(path.name + ".kept")
    try:
        if keep:
            shutil.rmtree(kept, ignore_errors=True)
            shutil.copytree(path, kept, symlinks=True)
    finally:
        scratch.unregister(str(path))
        release_stale(path)
    if keep:
        path.rmdir()
        kept.rename(path)


def _is_full(path: Path) -> bool:
    try:
        info = os.statvfs(path)
    except OSError:
        return False
    return info.f_bavail * info.f_frsize < FULL_MARGIN_BYTES or info.f_favail == 0


def _tree_bytes(path: Path) -> int:
    """Bytes allocated below `path` (links not followed), as a full tmpfs would have counted."""
    total = 0
    for here, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(here, name)).st_blocks * 512
    return total
