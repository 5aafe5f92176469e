from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from replicate.errors import InfraError
from replicate.sandbox.base import Limits, Mount, SandboxRequest
from replicate.sandbox.bwrap import (
    ENV_BINARY,
    BwrapSandbox,
    _command_ran,
    base_args,
    check_mounts,
    exact_env_prefix,
    mount_args,
    scratch_args,
)
from replicate.sandbox.system import Symlink, SystemView

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")


def request(**kw: object) -> SandboxRequest:
    base: dict[str, object] = {"argv": ("/bin/true",), "env": {}, "cwd": "/tmp", "timeout_s": 5}
    return SandboxRequest(**{**base, **kw})  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def local() -> BwrapSandbox:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    return BwrapSandbox()


def test_base_args_bind_then_link_then_cover() -> None:
    view = SystemView(
        read_only=("/usr", "/etc/passwd"),
        symlinks=(Symlink("/bin", "usr/bin"),),
        hidden_dirs=("/usr/lib/python3",),
        hidden_files=("/usr/share/x.whl",),
        python="/p/bin/python3.11",
        stdlib="/p/lib/python3.11",
    )
    assert base_args(view) == (
        "--ro-bind", "/usr", "/usr",
        "--ro-bind", "/etc/passwd", "/etc/passwd",
        "--symlink", "usr/bin", "/bin",
        "--tmpfs", "/usr/lib/python3", "--remount-ro", "/usr/lib/python3",
        "--ro-bind", "/dev/null", "/usr/share/x.whl",
        "--proc", "/proc", "--dev", "/dev",
    )  # fmt: skip


def test_mounts_outer_first_and_writable_only_when_asked() -> None:
    inner = Mount("/host/candidate.py", "/repo/pkg/mod.py")
    outer = Mount.same("/repo")
    work = Mount.same("/work", writable=True)
    assert mount_args([inner, outer, work]) == [
        "--ro-bind", "/repo", "/repo",
        "--bind", "/work", "/work",
        "--ro-bind", "/host/candidate.py", "/repo/pkg/mod.py",
    ]  # fmt: skip


def test_scratch_is_size_capped() -> None:
    assert scratch_args(Limits(file_size_mb=3))[:3] == ["--size", str(3 << 20), "--tmpfs"]


def test_exact_env_prefix() -> None:
    assert exact_env_prefix(request()) == [ENV_BINARY, "-u", "PWD", "--"]
    assert exact_env_prefix(request(env={"PWD": "/x"})) == [ENV_BINARY, "--", "PWD=/x"]
    assert exact_env_prefix(request(argv=("a=b",))) == []


def test_check_mounts(tmp_path: Path) -> None:
    check_mounts([Mount.same(str(tmp_path))])
    with pytest.raises(ValueError, match="absolute"):
        check_mounts([Mount("relative", "/x")])
    with pytest.raises(InfraError, match="does not exist"):
        check_mounts([Mount.same(str(tmp_path / "missing"))])


def test_status_parsing() -> None:
    assert _command_ran(b'{ "child-pid": 5 }\n{ "exit-code": 0 }\n')
    assert not _command_ran(b'{ "child-pid": 5 }\n')
    assert not _command_ran(b"not json\n")


@needs_bwrap
def test_command_line_isolates(local: BwrapSandbox) -> None:
    argv = local.command(request(), status_fd=42)
    joined = " ".join(argv)
    for flag in ("--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop ALL"):
        assert flag in joined
    assert "--share-net" not in argv
    assert "--share-net" in local.command(request(network=True), status_fd=42)
    tail = argv[argv.index("--remount-ro", len(argv) - 12) :]
    assert tail[:6] == ("--remount-ro", "/", "--chdir", "/tmp", "--json-status-fd", "42")
    assert tail[-1] == "/bin/true"


@needs_bwrap
def test_setup_failure_is_an_infra_error(local: BwrapSandbox, tmp_path: Path) -> None:
    source = tmp_path / "f"
    source.write_text("")
    bad = request(mounts=(Mount(str(source), "/usr/lib/no-such-dir/f"),))  # /usr/lib is read-only
    with pytest.raises(InfraError, match="sandbox setup failed: bwrap"):
        local.run(bad)


@needs_bwrap
def test_a_fake_status_line_on_stderr_is_not_trusted(local: BwrapSandbox) -> None:
    # the command cannot reach bwrap's status pipe; its own output proves nothing
    fake = request(argv=("/bin/sh", "-c", "echo 'bwrap: fake' >&2; exit 1"))
    result = local.run(fake)
    assert result.exit_code == 1 and result.stderr == b"bwrap: fake\n"
