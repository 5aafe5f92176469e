"""Scratch folders: gone after SIGINT/SIGTERM mid-grade, swept after SIGKILL once the owner died.

The grading process is a real `grade_text` of the tiny batch in the local sandbox, with a
candidate that sleeps while its module loads, run in a child with its own TMPDIR.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replicate import scratch
from tests.integration.minted import Tiny

ROOT = Path(__file__).resolve().parents[2]
CLAMP = "tinypkg.core.clamp"
GRADER = """
import sys
from replicate.batch.store import Batch
from replicate.cache import cache_root
from replicate import scratch
from replicate.jail.context import context_for
from replicate.jail import Jail
from replicate.sandbox import get_sandbox
from replicate.grading.grader import grade_text, original_source

scratch.install_signal_cleanup()
task = Batch.open(sys.argv[1]).load(sys.argv[2])
ctx = context_for(task.repo, cache_root())
slow = original_source(task).decode() + "\\nimport time\\ntime.sleep(120)\\n"
grade_text(task, slow, Jail(ctx, get_sandbox("local")))
"""


def _leftovers(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith("replicate-"))


def _grading(tiny: Tiny, tmp: Path) -> subprocess.Popen[bytes]:
    """A child grading the slow candidate, returned once its jail's scratch folder exists."""
    tmp.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-c", GRADER, str(tiny.batch_dir), tiny.id_of(CLAMP)],
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp)},
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not _leftovers(tmp) and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # well inside the grade: the candidate sleeps for two minutes
    assert child.poll() is None, child.communicate()[1].decode()
    assert _leftovers(tmp), "the grade made no scratch folder"
    return child


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_mid_grade_leaves_no_scratch(tiny: Tiny, tmp_path: Path, signum: int) -> None:
    tmp = tmp_path / "tmp"
    child = _grading(tiny, tmp)
    child.send_signal(signum)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode != 0
    assert _leftovers(tmp) == [], stderr.decode()[-2000:]


def test_sigkill_leaves_scratch_that_the_next_start_sweeps(tiny: Tiny, tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    child = _grading(tiny, tmp)
    child.kill()
    child.communicate(timeout=60)
    left = _leftovers(tmp)
    assert left  # the positive control: SIGKILL cannot be caught
    unowned = tmp / "replicate-jail-notours"
    unowned.mkdir()
    swept = scratch.sweep(tmp)
    assert sorted(p.name for p in swept) == left
    assert _leftovers(tmp) == [unowned.name]  # a folder that names no owner is not ours


def test_the_sweep_spares_a_living_owner(tmp_path: Path) -> None:
    mine = tmp_path / f"replicate-jail-{scratch.owner_token()}-x"
    mine.mkdir()
    pid = os.getpid()
    reused = tmp_path / f"replicate-jail-{pid}.{(scratch.start_time(pid) or 0) + 1}-x"
    reused.mkdir()  # this pid, another start time: a dead owner whose pid was reused
    assert scratch.sweep(tmp_path) == [reused]
    assert mine.exists()


def test_the_sweep_detaches_a_dead_owners_workspace_mount(tmp_path: Path) -> None:
    """A mount named for a process that no longer exists (as a SIGKILL during a run leaves)."""
    point = tmp_path / "ws"
    point.mkdir()
    never = int(Path("/proc/sys/kernel/pid_max").read_text())  # pids stay below it
    owner = f"{scratch.MOUNT_SOURCE_PREFIX}{never}.1"
    if subprocess.run(["mount", "-t", "tmpfs", owner, str(point)], check=False).returncode:
        pytest.skip("this process may not mount a tmpfs (needs CAP_SYS_ADMIN)")
    assert os.path.ismount(point)
    assert point in scratch.sweep(tmp_path)
    assert not os.path.ismount(point)


RUNNER = """
import signal
import sys
from pathlib import Path
from replicate import scratch
from replicate.agents.protocol import AgentConfig
from replicate.jail import Jail
from replicate.sandbox import get_sandbox
from replicate.scoring.batch_run import RunOptions, run_batch

# as a shell would start it: SIGTERM neither ignored nor blocked (both are inherited through exec,
# and an earlier test of this pytest process may have left either behind)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
scratch.install_signal_cleanup()
agent = AgentConfig("sleep 120", get_sandbox("local"), timeout_s=300, disk_quota_mb=16)
run_batch(RunOptions(Path(sys.argv[1]), Path(sys.argv[2]), agent, "local", task_ids=(sys.argv[3],)))
"""


def _mounted(below: Path) -> list[Path]:
    return [point for _, point in scratch.tmpfs_mounts() if below in point.parents]


def test_sigterm_during_the_agent_unmounts_its_workspace(tiny: Tiny, tmp_path: Path) -> None:
    out = tmp_path / "run"
    child = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(tiny.batch_dir), str(out), tiny.id_of(CLAMP)], cwd=ROOT
    )
    deadline = time.monotonic() + 60
    while not _mounted(out) and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if not _mounted(out):
        child.kill()
        child.wait()
        pytest.skip("no workspace mount appeared (mounting refused here?)")
    child.terminate()
    try:
        child.wait(timeout=60)
    except subprocess.TimeoutExpired:
        state = _signal_state(child.pid)
        child.kill()
        raise AssertionError(f"SIGTERM did not end the run in 60 s; its signals: {state}") from None
    assert child.returncode == -signal.SIGTERM
    assert _mounted(out) == []


def _signal_state(pid: int) -> str:
    """The pending, blocked, ignored and caught signal masks of `pid` and its threads."""
    lines = []
    for status in sorted(Path(f"/proc/{pid}/task").glob("*/status")):
        wanted = ("SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt", "State")
        found = [ln for ln in status.read_text().splitlines() if ln.startswith(wanted)]
        lines.append(f"{status.parent.name}: " + ", ".join(" ".join(f.split()) for f in found))
    return "; ".join(lines)


FORKED = """
import os, sys
from replicate import scratch
if sys.argv[1] == "unhooked":
    scratch._FORK_HOOKED.append(True)  # the positive control: no at-fork hook
path = scratch.make_dir("replicate-test-")
pid = os.fork()
if pid == 0:  # the child ends as a pool's worker or a trainer's data worker may: cleaning up
    scratch.cleanup_all()
    os._exit(0)
os.waitpid(pid, 0)
print(path.is_dir())
scratch.remove_dir(path)
"""


@pytest.mark.parametrize(("hook", "kept"), [("hooked", "True"), ("unhooked", "False")])
def test_a_forked_child_leaves_its_parent_s_scratch_alone(hook: str, kept: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", FORKED, hook], capture_output=True, text=True, check=True,
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60,
    )  # fmt: skip
    assert done.stdout.strip() == kept
