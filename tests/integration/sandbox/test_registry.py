from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator

import pytest

import replicate.sandbox as registry
from replicate.errors import ReplicateError
from replicate.sandbox import SandboxUnavailable, get_sandbox
from replicate.sandbox.bwrap import BwrapSandbox
from replicate.sandbox.plain import PlainSandbox


@pytest.fixture
def fresh_registry() -> Iterator[None]:
    registry._build.cache_clear()
    yield
    registry._build.cache_clear()


def test_unknown_name_is_a_one_line_error() -> None:
    with pytest.raises(ReplicateError) as caught:
        get_sandbox("x")
    assert str(caught.value) == "unknown sandbox 'x'; choose one of: local, plain, docker"


def test_names_and_lookup() -> None:
    assert registry.sandbox_names() == ("local", "plain", "docker")
    plain = get_sandbox("plain")
    assert isinstance(plain, PlainSandbox)
    assert (plain.name, plain.isolated) == ("plain", False)
    assert get_sandbox("plain") is plain  # built once


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
def test_local_is_bubblewrap() -> None:
    local = get_sandbox("local")
    assert isinstance(local, BwrapSandbox)
    assert (local.name, local.isolated) == ("local", True)


def test_missing_bwrap_is_unavailable_with_a_hint(
    monkeypatch: pytest.MonkeyPatch, fresh_registry: None
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(SandboxUnavailable) as caught:
        get_sandbox("local")
    assert str(caught.value) == "bubblewrap (bwrap) not found; apt-get install bubblewrap"
    assert isinstance(get_sandbox("plain"), PlainSandbox)  # the others still build


def test_import_builds_and_imports_no_backend() -> None:
    code = (
        "import sys, replicate.sandbox as s\n"
        "print(sorted(m for m in sys.modules if m.startswith('replicate.sandbox.')))\n"
        "print('docker' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules, docker = out.stdout.splitlines()
    assert "replicate.sandbox.base" in modules
    backends = ("bwrap", "docker", "plain", "process", "spawn")
    assert not [name for name in backends if f"'replicate.sandbox.{name}'" in modules]
    assert docker == "False"  # the docker SDK: only when the docker backend is built


def test_public_api() -> None:
    assert set(registry.__all__) == {
        "CHANNEL_FD",
        "Arrival",
        "Limits",
        "Mount",
        "Sandbox",
        "SandboxRequest",
        "SandboxResult",
        "SandboxUnavailable",
        "Started",
        "StopWhen",
        "WarmStart",
        "get_sandbox",
        "sandbox_names",
        "sweep_cgroups",
        "system_view",
    }
