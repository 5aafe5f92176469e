"""Per-run cgroup v1 groups: pids and memory limits that hold for root, and tree killing.

cgroups here are v1 (hybrid): the `pids` and `memory` controllers are writable under
/sys/fs/cgroup/; root ignores RLIMIT_NPROC, so a fork storm is held by `pids.max`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import signal
import time
import uuid
from pathlib import Path

from replicate.sandbox.base import Limits

_MB = 1 << 20


class Cgroup:
    """A fresh cgroup v1 group per run in each writable controller (`pids`, `memory`)."""

    def __init__(self, dirs: tuple[str, ...], join_fds: tuple[int, ...]) -> None:
        self.dirs = dirs
        self.join_fds = join_fds  # open `cgroup.procs` files the child writes itself into

    @classmethod
    def create(cls, limits: Limits, pids_overhead: int = 0, *, track: bool = True) -> Cgroup:
        """Joining costs the child an RCU grace period (~10 ms here), so only when needed."""
        name = f"replicate-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        wanted = []
        if limits.pids is not None or track:
            pids = "max" if limits.pids is None else str(limits.pids + pids_overhead)
            wanted.append(("pids", "pids.max", pids))
        if limits.memory_mb is not None:
            wanted.append(("memory", "memory.limit_in_bytes", str(limits.memory_mb * _MB)))
        dirs: list[str] = []
        fds: list[int] = []
        for controller, knob, value in wanted:
            parent = cgroup_parent(controller)
            if parent is None:
                continue
            path = os.path.join(parent, name)
            try:
                os.mkdir(path)
            except OSError:
                continue
            try:
                Path(path, knob).write_text(value)
                fds.append(os.open(os.path.join(path, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC))
            except OSError:
                os.rmdir(path)
                continue
            dirs.append(path)
        return cls(tuple(dirs), tuple(fds))

    def controls(self, controller: str) -> bool:
        parent = cgroup_parent(controller)
        return parent is not None and any(d.startswith(parent + os.sep) for d in self.dirs)

    def close_join_fds(self) -> None:
        for fd in self.join_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.join_fds = ()

    def members(self) -> list[int]:
        if not self.dirs:
            return []
        try:
            with open(os.path.join(self.dirs[0], "cgroup.procs")) as handle:
                return [int(line) for line in handle if line.strip()]
        except OSError:
            return []

    def kill_tree(self, leader: int) -> None:
        """SIGKILL the leader's process group, then every member until none is left."""
        with contextlib.suppress(OSError):
            os.killpg(leader, signal.SIGKILL)
        self.kill_members()

    def kill_members(self) -> None:
        """Until the group is empty (a pid namespace's init may still be exiting), ~5 s at most.

        A killed jail is gone ~1.5-2.5 ms later here: polled finely that long (each poll reads
        one small file), then less and less often."""
        for attempt in range(640):
            pids = self.members()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.0001 if attempt < 40 else min(0.0002 * 2 ** (attempt - 40), 0.01))

    def remove(self) -> None:
        self.close_join_fds()
        for path in self.dirs:
            for _ in range(200):
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    self.kill_members()
                    time.sleep(0.01)
        self.dirs = ()


_OWNED = re.compile(r"^replicate-(\d+)-[0-9a-f]{12}$")
CONTROLLERS = ("pids", "memory")


def sweep_cgroups() -> list[str]:
    """Remove the groups (`Cgroup.create`'s) of processes no longer running: a process killed
    with SIGKILL cannot remove its own; return what was removed.  A jail still in such a group
    (one that was starting when its owner died, before bwrap had set its parent-death signal)
    is killed first."""
    removed = []
    for controller in CONTROLLERS:
        parent = cgroup_parent(controller)
        if parent is None:
            continue
        with contextlib.suppress(OSError):
            for name in os.listdir(parent):
                owner = _OWNED.match(name)
                if owner is None or os.path.exists(f"/proc/{owner[1]}"):
                    continue
                path = os.path.join(parent, name)
                Cgroup((path,), ()).kill_members()
                with contextlib.suppress(OSError):  # gone meanwhile
                    os.rmdir(path)
                    removed.append(path)
    return removed


@functools.cache
def cgroup_parent(controller: str) -> str | None:
    """The writable cgroup v1 folder of this process for `controller`, or None."""
    own = _own_cgroup(controller)
    try:
        with open("/proc/self/mountinfo") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    for line in lines:
        head, _, tail = line.partition(" - ")
        fields, extra = head.split(), tail.split()
        if len(extra) < 3 or extra[0] != "cgroup" or controller not in extra[2].split(","):
            continue
        root, mount = fields[3], fields[4]
        candidates = [mount]
        if own is not None and own.startswith(root):
            candidates.insert(0, os.path.join(mount, own[len(root) :].lstrip("/")))
        for path in candidates:
            if os.path.isdir(path) and os.access(path, os.W_OK):
                return os.path.normpath(path)
    return None


def _own_cgroup(controller: str) -> str | None:
    try:
        with open("/proc/self/cgroup") as handle:
            for line in handle:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) == 3 and controller in parts[1].split(","):
                    return parts[2]
    except OSError:
        pass
    return None
