from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from replicate.sandbox import spawn
from replicate.sandbox.base import Limits

LIMITS = Limits(address_space_mb=None, file_size_mb=5)


def _captured(monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    real = subprocess.Popen

    def recording(args: Any, **kwargs: Any) -> Any:
        seen.update(kwargs, args=args)
        return real(args, **kwargs)

    monkeypatch.setattr(spawn.subprocess, "Popen", recording)
    proc = spawn.spawn(argv, {"A": "1"}, "/", subprocess.DEVNULL, LIMITS, -1, (), ())
    proc.communicate()
    return seen


def test_the_stub_needs_no_fork_of_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """No preexec_fn: Popen can vfork (a fork of a 1.6 GB gen process cost 55 ms a child)."""
    seen = _captured(monkeypatch, ("/bin/true",))
    assert seen["args"][0] == spawn.BASH and seen["env"] == {}
    assert seen.get("preexec_fn") is None


def test_an_argv0_with_an_equals_sign_falls_back_to_preexec(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    odd = tmp_path / "a=b"  # env would take it for a variable
    odd.symlink_to("/bin/true")
    seen = _captured(monkeypatch, (str(odd),))
    assert seen["args"] == [str(odd)] and seen["preexec_fn"] is not None


def test_a_failed_setup_exits_125_with_a_message() -> None:
    join = os.open(os.devnull, os.O_RDONLY)  # writing the "join" fd fails (EBADF)
    argv = (sys.executable, "-c", "print('ran')")
    try:
        proc = spawn.spawn(argv, {}, "/", subprocess.DEVNULL, LIMITS, -1, (), (join,))
        out, err = proc.communicate()
    finally:
        os.close(join)
    assert proc.returncode == spawn.SETUP_FAILED and out == b""
    assert b"replicate: sandbox setup failed" in err


JOIN_AT_3 = """
import os, subprocess
from replicate.sandbox import spawn
from replicate.sandbox.base import Limits
os.open(os.devnull, os.O_RDONLY)  # holds fd 3 until the next line takes it over
join_r, join_w = os.pipe()
os.dup2(join_w, 3)  # a cgroup's join fd is opened at the lowest free number: 3, say
chan_r, chan_w = os.pipe()
argv = ("/bin/sh", "-c", "printf channel >&3")
proc = spawn.spawn(argv, {}, "/", subprocess.DEVNULL, Limits(), chan_w, (), (3,))
proc.communicate()
os.close(chan_w), os.close(3), os.close(join_w)
print(os.read(join_r, 100).decode(), os.read(chan_r, 100).decode())
"""


def test_a_join_fd_at_3_is_written_then_gives_way_to_the_channel() -> None:
    done = subprocess.run(
        [sys.executable, "-c", JOIN_AT_3], capture_output=True, text=True, check=False
    )
    assert done.stdout.split() == ["0", "channel"], done.stderr
