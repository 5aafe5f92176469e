"""The docker backend: its plan (pure) and, where an engine and the base image exist, real runs of
what the shared contract suite does not cover (the unprivileged user, lent ownership, cleanup)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from replicate.errors import InfraError
from replicate.sandbox.base import Limits, Mount, SandboxRequest, SandboxUnavailable
from replicate.sandbox.docker import (
    DROP_PWD,
    ENV_BINARY,
    IO_DIR,
    LABEL,
    NOBODY,
    SET_PWD,
    SHELL,
    DockerSandbox,
    check_readable,
    command,
    merge_mounts,
    owner_label,
    plan_run,
    remove_stale_containers,
    require_image,
    resource_options,
    ulimits,
    view_mounts,
)
from replicate.sandbox.system import Symlink, SystemView

VIEW = SystemView(
    read_only=("/usr/bin", "/usr/lib", "/etc/passwd"),
    symlinks=(Symlink("/lib", "usr/lib"),),
    hidden_dirs=("/usr/lib/python3", "/opt/x/site-packages"),
    hidden_files=("/usr/share/x.whl",),
    python="/p/bin/python3.11",
    stdlib="/p/lib/python3.11",
)


def request(**kw: Any) -> SandboxRequest:
    base: dict[str, Any] = {"argv": ("/bin/true",), "env": {}, "cwd": "/tmp", "timeout_s": 5}
    return SandboxRequest(**{**base, **kw})


# --- the plan ----------------------------------------------------------------------------------


def test_view_mounts_bind_links_by_content_and_cover_package_folders(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to("real")
    view = SystemView(
        read_only=("/usr/bin",),
        symlinks=(Symlink(str(tmp_path / "link"), "real"),),
        hidden_dirs=(f"{tmp_path}/real/python3",),
        hidden_files=("/usr/share/x.whl",),
        python="/p/bin/python3.11",
        stdlib="/p/lib/python3.11",
    )
    assert view_mounts(view, "/E") == (
        Mount.same("/usr/bin"),
        Mount(str(tmp_path / "real"), str(tmp_path / "link")),
        Mount("/E", f"{tmp_path}/real/python3"),
        Mount("/dev/null", "/usr/share/x.whl"),
        Mount("/E", f"{tmp_path}/link/python3"),  # the cover follows the link's content
    )
    assert all(not m.writable for m in view_mounts(view, "/E"))


def test_view_mounts_skip_a_dangling_link() -> None:
    view = SystemView((), (Symlink("/no/such/link", "gone"),), (), (), "/p", "/s")
    assert view_mounts(view, "/E") == ()


def test_request_mounts_replace_view_mounts_with_the_same_target() -> None:
    view = (Mount.same("/usr/bin"), Mount("/E", "/opt/pkg"))
    requested = (Mount("/mine", "/opt/pkg/"), Mount.same("/work", writable=True))
    assert merge_mounts(view, requested) == (
        Mount.same("/usr/bin"),
        Mount("/mine", "/opt/pkg/"),
        Mount.same("/work", writable=True),
    )


def test_command_is_wrapper_then_exact_environment() -> None:
    argv = command(request(argv=("prog", "a b"), env={"A": "1", "-x": "2"}, cwd="/w"))
    assert argv[:2] == (SHELL, "-c")
    assert argv[3:8] == ("sh", "/w", ENV_BINARY, "-i", "--")
    assert argv[8:] == ("A=1", "-x=2", SHELL, "-c", DROP_PWD, "sh", "prog", "a b")
    script = argv[2]
    assert f"<{IO_DIR}/stdin" in script and f">{IO_DIR}/stdout" in script
    assert "3>" not in script and "ulimit" not in script
    assert script.endswith('"$@"; exit $?')  # not exec: the wrapper stays pid 1


def test_command_channel_address_space_and_requested_pwd() -> None:
    argv = command(
        request(env={"PWD": "/given"}, channel=True, limits=Limits(address_space_mb=1024))
    )
    assert f"3>{IO_DIR}/channel" in argv[2]
    assert "ulimit -v 1048576 || exit 1;" in argv[2]
    assert argv[-5:] == (SHELL, "-c", SET_PWD, "/given", "/bin/true")


def test_plan_isolates_and_limits() -> None:
    plan = plan_run(
        request(mounts=(Mount.same("/work", writable=True),), limits=Limits(file_size_mb=8)),
        VIEW,
        "/io",
        "/empty",
    )
    options = plan.options
    assert options["network_mode"] == "none"
    assert (options["read_only"], options["cap_drop"], options["init"]) == (True, ["ALL"], False)
    assert options["security_opt"] == ["no-new-privileges"]
    assert options["environment"] == {} and options["log_config"]["type"] == "none"
    assert (options["pids_limit"], options["mem_limit"], options["memswap_limit"]) == (
        257,
        "2048m",
        "2048m",
    )
    assert plan.tmpfs == {"/tmp": f"rw,nosuid,nodev,size={8 << 20},mode=1777"}
    assert options["shm_size"] == 8 << 20
    assert plan.mounts[-1] == Mount("/io", IO_DIR)
    assert Mount.same("/work", writable=True) in plan.mounts
    assert Mount("/empty", "/usr/lib/python3") in plan.mounts
    assert plan.output_cap == Limits().output_bytes


def test_plan_network_and_a_mount_on_tmp() -> None:
    plan = plan_run(request(network=True, mounts=(Mount.same("/tmp"),)), VIEW, "/io", "/e")
    assert plan.options["network_mode"] == "host"
    assert plan.tmpfs == {}


def test_unset_limits_are_not_passed() -> None:
    limits = Limits(memory_mb=None, pids=None, file_size_mb=None)
    assert resource_options(limits) == {}
    assert ulimits(limits) == [{"name": "core", "soft": 0, "hard": 0}]
    assert ulimits(Limits(file_size_mb=2))[1] == {"name": "fsize", "soft": 2 << 20, "hard": 2 << 20}


def test_check_readable_names_an_unreadable_source(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    open_dir = tmp_path / "open"
    open_dir.mkdir(mode=0o755)
    check_readable((Mount.same(str(open_dir)), Mount.same(str(private), writable=True)), NOBODY)
    with pytest.raises(InfraError, match=r"private \(mode 0700\) is not readable by the sandbox"):
        check_readable((Mount.same(str(private)),), NOBODY)
    os.chmod(private, 0o705)
    check_readable((Mount.same(str(private)),), NOBODY)


# --- engine failures, with a fake client ---------------------------------------------------------


class FakeImages:
    def __init__(self, error: Exception | None) -> None:
        self.error = error

    def get(self, name: str) -> object:
        if self.error is not None:
            raise self.error
        return object()


class FakeClient:
    def __init__(self, error: Exception | None = None) -> None:
        self.images = FakeImages(error)


def test_missing_image_is_unavailable_with_the_setup_hint() -> None:
    import docker.errors

    with pytest.raises(SandboxUnavailable) as caught:
        require_image(FakeClient(docker.errors.ImageNotFound("no")), "img:1")
    assert str(caught.value) == "docker image img:1 is missing; run scripts/docker-setup.sh"
    require_image(FakeClient(), "img:1")


def test_no_engine_is_unavailable_with_the_setup_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(SandboxUnavailable) as caught:
        DockerSandbox()
    assert str(caught.value).startswith("no Docker engine answers (")
    assert str(caught.value).endswith("); run scripts/docker-setup.sh")


class FakeApi:
    """The low-level client's listing (each container's labels in the listing itself) and
    removal by id."""

    def __init__(self, labels: list[str]) -> None:
        self.items = [{"Id": label, "Labels": {LABEL: label}} for label in labels]
        self.removed: list[str] = []

    def containers(self, all: bool, filters: dict[str, str]) -> list[dict[str, Any]]:
        assert all and filters == {"label": LABEL}
        return self.items

    def remove_container(self, ident: str, force: bool) -> None:
        assert force
        self.removed.append(ident)


def test_stale_containers_are_those_whose_creator_is_gone() -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True).stdout.strip()  # fmt: skip
    client = FakeClient()
    client.api = FakeApi(  # type: ignore[attr-defined]
        [owner_label(), f"{dead}:1", f"{os.getpid()}:0", "garbage"]
    )
    assert remove_stale_containers(client) == 3
    assert client.api.removed == [f"{dead}:1", f"{os.getpid()}:0", "garbage"]  # type: ignore[attr-defined]


# --- real runs -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def docker_sandbox() -> DockerSandbox:
    try:
        return DockerSandbox()
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))


def sh(box: DockerSandbox, script: str, **kw: Any) -> Any:
    env = {"PATH": "/usr/bin:/bin"}
    return box.run(request(argv=("/bin/sh", "-c", script), env=env, **kw))


@pytest.mark.skipif(os.geteuid() != 0, reason="lending ownership needs root")
def test_runs_unprivileged_and_lends_writable_mounts(
    docker_sandbox: DockerSandbox, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "sub" / "theirs").write_text("x")
    os.chown(work / "sub" / "theirs", 1234, 1234)
    script = (
        f"id -u; id -g; echo new > {work}/sub/new; ln -s /etc/passwd {work}/link;"
        f" stat -c %u {work}/sub/theirs"
    )
    result = sh(docker_sandbox, script, mounts=(Mount.same(str(work), writable=True),))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == b"65534\n65534\n65534\n"
    owners = {p.name: (p.lstat().st_uid, p.lstat().st_gid) for p in work.rglob("*")}
    assert owners == {"sub": (0, 0), "theirs": (1234, 1234), "new": (0, 0), "link": (0, 0)}
    assert Path("/etc/passwd").stat().st_uid == 0  # the link was not followed


def test_unreadable_working_directory_is_an_infra_error(
    docker_sandbox: DockerSandbox, tmp_path: Path
) -> None:
    target = tmp_path / "t"
    target.mkdir(mode=0o755)
    with pytest.raises(InfraError, match=r"setup failed: .*can't cd to /no/such/dir"):
        sh(docker_sandbox, "true", cwd="/no/such/dir")
    assert sh(docker_sandbox, "pwd", cwd=str(target), mounts=(Mount.same(str(target)),)).stdout == (
        f"{target}\n".encode()
    )


def test_a_command_path_with_an_equals_sign(docker_sandbox: DockerSandbox, tmp_path: Path) -> None:
    folder = tmp_path / "a=b"
    folder.mkdir(mode=0o755)
    (folder / "run=me").symlink_to("/usr/bin/env")
    result = docker_sandbox.run(
        request(argv=(f"{folder}/run=me",), env={"K": "v"}, mounts=(Mount.same(str(folder)),))
    )
    assert (result.exit_code, result.stdout) == (0, b"K=v\n")


def test_no_container_is_left_behind(docker_sandbox: DockerSandbox) -> None:
    sh(docker_sandbox, "true")
    sh(docker_sandbox, "sleep 30", timeout_s=0.5)
    leftover = docker_sandbox.client.containers.list(
        all=True, filters={"label": f"{LABEL}={owner_label()}"}
    )
    assert leftover == []
