"""The sandbox contract, run against every registered backend (local, plain, docker).

The first half holds for every backend (plain included); the second half only for backends that
isolate (`isolated = True`).  A backend that cannot run on this machine is skipped with its hint,
unless REPLICATE_REQUIRE_SANDBOXES (comma-separated names; CI sets it) requires it: then its tests
fail, so a missing engine or image cannot pass as green.
"""

from __future__ import annotations

import ast
import os
import socket
import statistics
import sys
import time
import tracemalloc
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from replicate.errors import InfraError
from replicate.sandbox import (
    Limits,
    Mount,
    Sandbox,
    SandboxRequest,
    SandboxResult,
    SandboxUnavailable,
    get_sandbox,
    sandbox_names,
)
from replicate.sandbox.cgroup import cgroup_parent
from replicate.sandbox.system import system_view

PYTHON = system_view().python
ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}
DAEMON = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(300)
    os._exit(0)
print("parent done")
"""


REQUIRED = {n for n in os.environ.get("REPLICATE_REQUIRE_SANDBOXES", "").split(",") if n}


@pytest.fixture(params=sandbox_names())
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    try:
        return get_sandbox(request.param)
    except SandboxUnavailable as exc:
        if request.param in REQUIRED:
            pytest.fail(f"required sandbox {request.param} is unavailable: {exc}")
        pytest.skip(f"{request.param} unavailable: {exc}")


@pytest.fixture
def isolated(sandbox: Sandbox) -> Sandbox:
    if not sandbox.isolated:
        pytest.skip(f"{sandbox.name} does not isolate")
    return sandbox


def run(
    sandbox: Sandbox,
    *argv: str,
    cwd: str = "/tmp",
    timeout_s: float = 20.0,
    env: dict[str, str] | None = None,
    mounts: tuple[Mount, ...] = (),
    stdin: bytes = b"",
    network: bool = False,
    channel: bool = False,
    limits: Limits | None = None,
) -> SandboxResult:
    request = SandboxRequest(
        argv=argv,
        env=ENV if env is None else env,
        cwd=cwd,
        timeout_s=timeout_s,
        mounts=mounts,
        stdin=stdin,
        network=network,
        channel=channel,
        limits=limits or Limits(),
    )
    return sandbox.run(request)


def py(sandbox: Sandbox, code: str, *args: str, **kw: Any) -> SandboxResult:
    return run(sandbox, PYTHON, "-I", "-S", "-c", code, *args, **kw)


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry))
    return found


# --- every backend -------------------------------------------------------------------------


def test_returns_exit_code_stdout_and_stderr(sandbox: Sandbox) -> None:
    result = run(sandbox, "/bin/sh", "-c", "echo hello; echo oops >&2; exit 7")
    assert (result.exit_code, result.timed_out) == (7, False)
    assert (result.stdout, result.stderr) == (b"hello\n", b"oops\n")
    assert result.duration_s > 0


def test_environment_is_exactly_the_request(sandbox: Sandbox) -> None:
    env = {"PATH": "/usr/bin:/bin", "ONLY": "this one"}
    result = run(sandbox, "/usr/bin/env", env=env)
    assert sorted(result.stdout.decode().splitlines()) == ["ONLY=this one", "PATH=/usr/bin:/bin"]
    given = run(sandbox, "/usr/bin/env", env={"PWD": "/given", "HOME": "/h"})
    assert sorted(given.stdout.decode().splitlines()) == ["HOME=/h", "PWD=/given"]


def test_working_directory_and_stdin(sandbox: Sandbox, tmp_path: Path) -> None:
    tmp_path.chmod(0o755)  # read-only sources must be readable by others (docker: uid 65534)
    data = os.urandom(300_000)
    result = run(
        sandbox,
        "/bin/sh",
        "-c",
        "pwd >&2; cat",
        cwd=str(tmp_path),
        stdin=data,
        mounts=(Mount.same(str(tmp_path)),),
    )
    assert result.stderr == f"{tmp_path}\n".encode()
    assert result.stdout == data


def test_timeout_kills_and_reports(sandbox: Sandbox) -> None:
    ignore_term = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile 1: pass"
    started = time.monotonic()
    result = py(sandbox, ignore_term, timeout_s=1.0)
    assert time.monotonic() - started < 1.0 + 2.0
    assert (result.timed_out, result.exit_code) == (True, None)


def test_channel_returns_what_fd3_received(sandbox: Sandbox) -> None:
    result = run(sandbox, "/bin/sh", "-c", "printf 'frame-1' >&3; echo out", channel=True)
    assert (result.channel, result.stdout, result.exit_code) == (b"frame-1", b"out\n", 0)
    closed = run(sandbox, "/bin/sh", "-c", "printf x >&3")
    assert closed.exit_code != 0 and closed.channel == b""


def test_output_caps_hold_for_a_100mb_flood(sandbox: Sandbox) -> None:
    limits = Limits(output_bytes=1_000_000)
    tracemalloc.start()
    try:
        result = run(sandbox, "/usr/bin/head", "-c", "100000000", "/dev/zero", limits=limits)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.exit_code == 0
    assert result.stdout == b"\0" * 1_000_000
    assert peak < 16_000_000


def test_double_forked_daemon_is_gone_after_return(sandbox: Sandbox) -> None:
    marker = f"daemon-{uuid.uuid4().hex}"
    result = py(sandbox, DAEMON, marker)
    assert result.stdout == b"parent done\n"
    assert processes_with(marker) == []


def test_death_by_signal_is_reported_as_a_shell_would(sandbox: Sandbox) -> None:
    assert run(sandbox, "/bin/sh", "-c", "kill -9 $$").exit_code == 128 + 9


def test_missing_command_exits_127(sandbox: Sandbox) -> None:
    result = run(sandbox, "/no/such/program")
    assert result.exit_code == 127 and not result.timed_out


def test_missing_working_directory_is_an_infra_error(sandbox: Sandbox) -> None:
    with pytest.raises(InfraError):
        run(sandbox, "/bin/true", cwd="/no/such/dir")


def test_memory_limit_makes_a_4gb_allocation_fail(sandbox: Sandbox) -> None:
    # Touch every page: a cgroup limit only bites on memory actually used.
    bomb = "b = bytearray(4 << 30)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint('survived')"
    result = py(sandbox, bomb, limits=Limits(memory_mb=1024))
    assert result.exit_code != 0 and b"survived" not in result.stdout


def test_address_space_limit_raises_memory_error(sandbox: Sandbox) -> None:
    limits = Limits(memory_mb=1024, address_space_mb=1024)
    result = py(sandbox, "b = bytearray(4 << 30)", limits=limits)
    assert result.exit_code == 1 and b"MemoryError" in result.stderr


def test_file_size_limit(sandbox: Sandbox, tmp_path: Path) -> None:
    script = f"head -c 3000000 /dev/zero > {tmp_path}/big"
    result = run(
        sandbox,
        "/bin/sh",
        "-c",
        script,
        mounts=(Mount.same(str(tmp_path), writable=True),),
        limits=Limits(file_size_mb=1),
    )
    assert result.exit_code != 0
    assert (tmp_path / "big").stat().st_size <= 1 << 20


def test_process_count_limit(sandbox: Sandbox) -> None:
    if cgroup_parent("pids") is None:
        pytest.skip("no writable pids cgroup: root ignores RLIMIT_NPROC")
    storm = "for i in $(seq 1 200); do sleep 5 & done; wait"
    result = run(sandbox, "/bin/sh", "-c", storm, timeout_s=15, limits=Limits(pids=20))
    assert b"fork" in result.stderr.lower()
    assert not result.timed_out


# --- isolating backends only -------------------------------------------------------------


@pytest.fixture
def host_server() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


CONNECT = "import socket, sys\nsocket.create_connection(('127.0.0.1', int(sys.argv[1])), 2)"


def test_network_is_unreachable(isolated: Sandbox, host_server: int) -> None:
    blocked = py(isolated, CONNECT, str(host_server))
    assert blocked.exit_code == 1 and b"ConnectionRefusedError" in blocked.stderr
    interfaces = run(isolated, "/bin/cat", "/proc/net/dev").stdout.decode().splitlines()[2:]
    assert [line.split(":")[0].strip() for line in interfaces] == ["lo"]
    assert py(isolated, CONNECT, str(host_server), network=True).exit_code == 0


def test_writes_outside_writable_mounts_fail(isolated: Sandbox, tmp_path: Path) -> None:
    (tmp_path / "ro").mkdir()
    (tmp_path / "rw").mkdir()
    mounts = (Mount.same(str(tmp_path / "ro")), Mount.same(str(tmp_path / "rw"), writable=True))
    paths = ["/x", "/usr/x", "/etc/x", f"{system_view().stdlib}/x", f"{tmp_path}/ro/x"]
    script = "for p in " + " ".join(paths) + '; do touch "$p" 2>/dev/null && echo "$p"; done'
    result = run(isolated, "/bin/sh", "-c", script + f"; echo ok > {tmp_path}/rw/x", mounts=mounts)
    assert (result.stdout, result.exit_code) == (b"", 0)
    assert (tmp_path / "rw" / "x").read_text() == "ok\n"
    assert list((tmp_path / "ro").iterdir()) == []


def test_package_folders_are_empty_inside(isolated: Sandbox) -> None:
    view = system_view()
    assert view.hidden_dirs
    code = "import os, sys\nprint([p for p in sys.argv[1:] if os.listdir(p)])"
    assert py(isolated, code, *view.hidden_dirs).stdout == b"[]\n"
    site = os.path.join(view.stdlib, "site-packages")
    assert os.listdir(site) and site in view.hidden_dirs  # the host's is full


def test_only_the_standard_library_imports(isolated: Sandbox) -> None:
    assert py(isolated, "import json, ssl, sqlite3, decimal, zlib").exit_code == 0
    for module in ("attr", "pydantic", "pip", "setuptools", "more_itertools"):
        assert py(isolated, f"import {module}").exit_code == 1, module
    with_site = run(isolated, PYTHON, "-c", "import attr")
    assert b"ModuleNotFoundError" in with_site.stderr


def test_debian_dist_packages_and_unmounted_paths_are_invisible(isolated: Sandbox) -> None:
    code = "import os, sys\nprint([p for p in sys.argv[1:] if os.path.exists(p)])"
    paths = ["/usr/lib/python3/dist-packages/six.py", "/work", "/usr/local", "/root/.cache"]
    paths += [os.path.join(sys.base_prefix, "lib", "python3.11", "site-packages", "attr")]
    assert py(isolated, code, *paths).stdout == b"[]\n"


def test_capabilities_are_dropped(isolated: Sandbox) -> None:
    status = run(isolated, "/bin/cat", "/proc/self/status").stdout.decode()
    assert "CapEff:\t0000000000000000" in status
    site = os.path.join(system_view().stdlib, "site-packages")
    result = run(isolated, "/bin/sh", "-c", f"umount {site} || exit 9; ls {site}")
    assert result.exit_code == 9 and result.stdout == b""


def test_mounts_remap_and_a_file_mount_over_a_file(isolated: Sandbox, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "mod.py").write_text("original\n")
    (tree / "pkg" / "other.py").write_text("other\n")
    replacement = tmp_path / "candidate.py"
    replacement.write_text("replacement\n")
    data = tmp_path / "data"
    data.mkdir()
    (data / "f").write_text("data\n")
    mounts = (
        Mount(str(replacement), str(tree / "pkg" / "mod.py")),  # listed before its parent
        Mount.same(str(tree)),
        Mount(str(data), "/data"),
    )
    script = f"cat {tree}/pkg/mod.py {tree}/pkg/other.py /data/f"
    result = run(isolated, "/bin/sh", "-c", script, mounts=mounts)
    assert result.stdout == b"replacement\nother\ndata\n"


def test_pid_namespace(isolated: Sandbox) -> None:
    code = (
        "import os\nprint(os.getpid(), sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))"
    )
    pid, listing = py(isolated, code).stdout.decode().split(" ", 1)
    visible = ast.literal_eval(listing)
    assert int(pid) < 10 and int(pid) in visible
    assert max(visible) < 10 and os.getpid() not in visible  # no host process


def test_only_standard_fds_are_open(isolated: Sandbox) -> None:
    code = "import os\nprint(sorted(int(f) for f in os.listdir('/proc/self/fd')))"
    assert py(isolated, code, channel=True).stdout == b"[0, 1, 2, 3, 4]\n"  # 4: the listing


def test_sandbox_start_cost(sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    costs = {}
    commands = {
        "true": ("/bin/true",),
        "python -I -S": (PYTHON, "-I", "-S", "-c", "pass"),
        "python -P -s -S": (PYTHON, "-P", "-s", "-S", "-c", "pass"),
    }
    for label, argv in commands.items():
        run(sandbox, *argv)
        samples = []
        for _ in range(10):
            started = time.perf_counter()
            assert run(sandbox, *argv).exit_code == 0
            samples.append(time.perf_counter() - started)
        costs[label] = statistics.median(samples) * 1000
    with capsys.disabled():
        print(f"\n[{sandbox.name}] " + ", ".join(f"{k}: {v:.1f} ms" for k, v in costs.items()))
