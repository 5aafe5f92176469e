from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from replicate.errors import InfraError
from replicate.sandbox import cgroup, spawn
from replicate.sandbox.base import Limits, SandboxResult
from replicate.sandbox.cgroup import Cgroup, cgroup_parent
from replicate.sandbox.process import (
    Pipe,
    ProcessSpec,
    StartedProcess,
    run_process,
    start_process,
)


@pytest.fixture(autouse=True, params=["stub", "preexec"])
def setup_way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test here runs with the child's setup in the bash stub and in `preexec_fn`."""
    if request.param == "preexec":
        monkeypatch.setattr(spawn, "stub_available", lambda: False)
    else:
        assert spawn.stub_available()
    return str(request.param)


needs_cgroup = pytest.mark.skipif(cgroup_parent("pids") is None, reason="no writable pids cgroup")
DAEMON = (  # the leader exits once the daemon exists (its parent, which made it, is gone)
    "import os, time\n"
    "child = os.fork()\n"
    "if child == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        time.sleep(60)\n"
    "    os._exit(0)\n"
    "os.waitpid(child, 0)\n"
)


def sh(
    script: str, stdin: bytes = b"", channel: bool = False, limits: Limits | None = None
) -> SandboxResult:
    spec = ProcessSpec(
        argv=("/bin/sh", "-c", script),
        env={},
        cwd="/",
        timeout_s=10,
        limits=limits or Limits(),
        stdin=stdin,
        channel=channel,
    )
    return run_process(spec)


def marked(marker: str) -> list[int]:
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                found.append(int(entry))
        except OSError:
            pass
    return found


def our_groups() -> list[str]:
    parent = cgroup_parent("pids")
    prefix = f"replicate-{os.getpid()}-"
    return [n for n in os.listdir(parent) if n.startswith(prefix)] if parent else []


def test_exit_code_streams_and_signal_death() -> None:
    done = sh("echo out; echo err >&2; exit 3")
    assert (done.exit_code, done.timed_out) == (3, False)
    assert (done.stdout, done.stderr) == (b"out\n", b"err\n")
    assert sh("kill -TERM $$").exit_code == 128 + signal.SIGTERM


def test_timeout_kills_the_group() -> None:
    started = time.monotonic()
    done = run_process(ProcessSpec(("/bin/sleep", "30"), {}, "/", timeout_s=0.3))
    assert (done.exit_code, done.timed_out) == (None, True)
    assert 0.3 <= done.duration_s < 1.5 and time.monotonic() - started < 2.5


def test_caps_apply_to_each_stream() -> None:
    script = "head -c 50000 /dev/zero; head -c 70000 /dev/zero >&2"
    done = sh(script, limits=Limits(output_bytes=1000))
    assert (len(done.stdout), len(done.stderr), done.exit_code) == (1000, 1000, 0)


def test_stdin_is_fed_and_an_unread_stdin_does_not_hang() -> None:
    assert sh("wc -c", stdin=b"x" * 200_000).stdout.strip() == b"200000"
    started = time.monotonic()
    assert sh("exit 0", stdin=b"x" * 5_000_000).exit_code == 0
    assert time.monotonic() - started < 2


def test_channel_is_fd_3_and_only_when_asked() -> None:
    assert sh("printf abc >&3", channel=True).channel == b"abc"
    closed = sh("printf abc >&3")
    assert closed.exit_code != 0 and b"Bad file descriptor" in closed.stderr


def test_side_pipe_keeps_its_number() -> None:
    side = Pipe()
    assert side.read_fd >= 10 and side.write_fd >= 10
    code = f"import os; os.write({side.write_fd}, b'status')"
    spec = ProcessSpec((sys.executable, "-I", "-S", "-c", code), {}, "/", 10)
    assert run_process(spec, side=side).side == b"status"
    assert (side.read_fd, side.write_fd) == (-1, -1)


def test_environment_is_exact() -> None:
    done = run_process(ProcessSpec(("/usr/bin/env",), {"A": "1"}, "/", 10))
    assert done.stdout == b"A=1\n"


def test_command_not_found_or_not_executable(tmp_path: Path) -> None:
    assert sh_argv("/no/such/program").exit_code == 127
    script = tmp_path / "script"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o644)
    assert sh_argv(str(script)).exit_code == 126


def sh_argv(*argv: str) -> SandboxResult:
    return run_process(ProcessSpec(argv, {}, "/", 10))


def test_missing_working_directory_is_infra() -> None:
    with pytest.raises(InfraError, match="cannot start"):
        run_process(ProcessSpec(("/bin/true",), {}, "/no/such/dir", 10))


def test_rlimits_reach_the_child() -> None:
    code = (
        "import resource as r\n"
        "print([r.getrlimit(x)[0] for x in (r.RLIMIT_AS, r.RLIMIT_FSIZE, r.RLIMIT_CORE)])"
    )
    limits = Limits(memory_mb=None, address_space_mb=512, file_size_mb=3)
    done = run_process(ProcessSpec((sys.executable, "-I", "-S", "-c", code), {}, "/", 10, limits))
    assert done.stdout == f"[{512 << 20}, {3 << 20}, 0]\n".encode()
    assert resource.getrlimit(resource.RLIMIT_AS)[0] != 512 << 20  # ours are untouched


def test_memory_alone_sets_no_address_space_limit_where_a_cgroup_holds_it() -> None:
    # Node's WebAssembly cannot live under RLIMIT_AS; agents get the cgroup limit only.
    code = "import resource as r\nprint(r.getrlimit(r.RLIMIT_AS)[0])"
    limits = Limits(memory_mb=512)
    done = run_process(ProcessSpec((sys.executable, "-I", "-S", "-c", code), {}, "/", 10, limits))
    expected = -1 if cgroup_parent("memory") is not None else 512 << 20
    assert done.stdout == f"{expected}\n".encode()


@needs_cgroup
def test_cgroup_limits_and_cleanup() -> None:
    group = Cgroup.create(Limits(pids=7, memory_mb=300), pids_overhead=2)
    try:
        pids_dir = next(d for d in group.dirs if "/pids" in d)
        assert Path(pids_dir, "pids.max").read_text().strip() == "9"
        memory_dir = next(d for d in group.dirs if "/memory" in d)
        assert Path(memory_dir, "memory.limit_in_bytes").read_text().strip() == str(300 << 20)
    finally:
        group.remove()
    assert not any(os.path.exists(d) for d in (pids_dir, memory_dir))
    untracked = Cgroup.create(Limits(pids=None, memory_mb=None), track=False)
    assert untracked.dirs == ()


@needs_cgroup
def test_no_cgroup_is_left_behind() -> None:
    sh("sleep 5 & echo started", limits=Limits(pids=50))
    assert our_groups() == []


@needs_cgroup
def test_escaped_daemon_survives_a_group_kill_but_not_the_cgroup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The attack first: without the cgroup, killing the process group misses the daemon.
    marker = f"daemon-{uuid.uuid4().hex}"
    argv = (sys.executable, "-I", "-S", "-c", DAEMON, marker)
    with monkeypatch.context() as patch:
        patch.setattr(cgroup, "cgroup_parent", lambda controller: None)
        run_process(ProcessSpec(argv, {}, "/", 10))
    survivors = marked(marker)
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors
    # The defence: the cgroup remembers it.
    marker = f"daemon-{uuid.uuid4().hex}"
    run_process(ProcessSpec((*argv[:-1], marker), {}, "/", 10))
    assert marked(marker) == []


@needs_cgroup
def test_process_count_is_capped_for_root() -> None:
    done = sh("for i in $(seq 1 60); do sleep 3 & done; wait", limits=Limits(pids=10))
    assert b"fork" in done.stderr.lower() and not done.timed_out


def test_a_started_process_gets_its_stdin_ahead_and_the_rest_at_finish() -> None:
    # The warm path: the job goes in when the process starts (it can read and parse it while
    # nothing else is known), the nonce when it is finished; then stdin is closed.
    for head in (b"job\n", b"y" * 300_000):
        spec = ProcessSpec(("/bin/sh", "-c", "cat"), {}, "/", 10, stdin=head, stdin_later=True)
        started = start_process(spec)
        assert isinstance(started, StartedProcess)
        assert started.unsent == b""  # all of it is in the pipe already, before `finish`
        assert started.finish(b"nonce", 10).stdout == head + b"nonce"
    later = ProcessSpec(("/bin/sh", "-c", "cat"), {}, "/", 10, stdin=b"all", stdin_later=False)
    assert run_process(later).stdout == b"all"  # sent once, not ahead and again


FD_3_CLOSES = """
import os, subprocess, sys
from replicate.sandbox.process import ProcessSpec, run_process
r, w = os.pipe()
assert r == 3  # another thread's pipe holds fd 3 ...
real = subprocess._fork_exec
def fork_exec(*args):
    os.close(3)  # ... and closes it after Popen made its pipes, just before the fork
    return real(*args)
subprocess._fork_exec = fork_exec
if sys.argv[1] == "control":  # what a run with `pass_fds=(3,)` did
    try:
        subprocess.Popen(["/bin/true"], pass_fds=(3,))
    except OSError as exc:
        print("EBADF" if exc.errno == 9 else exc)
else:
    spec = ProcessSpec(("/bin/sh", "-c", "printf ok >&3"), {}, "/", 10, channel=True)
    print(run_process(spec).channel.decode())
"""


@pytest.mark.parametrize(("way", "expected"), [("control", "EBADF"), ("run", "ok")])
def test_the_parents_fd_3_may_close_at_fork_time(way: str, expected: str) -> None:
    """Stop 8's CI: gen failed with EBADF when a thread's fd 3 closed as a run started."""
    argv = [sys.executable, "-c", FD_3_CLOSES, way]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.stdout.strip() == expected, done.stderr


def test_only_the_channel_and_the_side_pipe_are_passed() -> None:
    stray = os.open(os.devnull, os.O_RDONLY)
    os.set_inheritable(stray, True)  # inheritable in this process, yet not the child's
    side = Pipe()
    listing = "import os; print(sorted(int(f) for f in os.listdir('/proc/self/fd')))"
    spec = ProcessSpec((sys.executable, "-I", "-S", "-c", listing), {}, "/", 10, channel=True)
    try:
        side_fd = side.write_fd
        fds = run_process(spec, side=side).stdout.decode().strip()
    finally:
        os.close(stray)
    assert fds == str(sorted([0, 1, 2, 3, side_fd, 4 if side_fd != 4 else 5]))
