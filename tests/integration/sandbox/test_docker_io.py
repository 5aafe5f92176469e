"""The docker sandbox's host plumbing, with a plain process standing in for the container."""

from __future__ import annotations

import os
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from replicate.sandbox.docker_io import STREAMS, IoDir, lend

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")


@pytest.fixture
def io() -> Iterator[IoDir]:
    folder = IoDir(b"the input", owner=None)
    try:
        yield folder
    finally:
        folder.close()


def container(io: IoDir, script: str) -> tuple[subprocess.Popen[bytes], int]:
    """`script` run by sh in `io.io`, as the wrapper would; the fd turns readable at its exit."""
    proc = subprocess.Popen(["/bin/sh", "-c", script], cwd=io.io)
    read_fd, write_fd = os.pipe()

    def waiter() -> None:
        proc.wait()
        os.write(write_fd, b"x")
        os.close(write_fd)

    threading.Thread(target=waiter, daemon=True).start()
    return proc, read_fd


def test_layout_and_cleanup(io: IoDir) -> None:
    assert (io.io / "stdin").read_bytes() == b"the input"
    assert list(io.empty.iterdir()) == []
    for name in STREAMS:
        assert stat.S_ISFIFO((io.io / name).stat().st_mode)
    assert stat.S_IMODE(io.io.stat().st_mode) == 0o755
    io.close()
    assert not io.root.exists()


def test_collects_each_stream_with_caps(io: IoDir) -> None:
    script = (
        "exec <stdin >stdout 2>stderr 3>channel; cat; echo err >&2; printf frame >&3;"
        " printf x >status; head -c 5000000 /dev/zero"
    )
    proc, ended = container(io, script)
    started = time.monotonic()
    captured = io.collect(1000, ended, time.monotonic() + 20, kill=proc.kill)
    os.close(ended)
    assert time.monotonic() - started < 10
    assert captured.stdout == b"the input" + b"\0" * (1000 - len(b"the input"))
    assert (captured.stderr, captured.channel, captured.status) == (b"err\n", b"frame", b"x")
    assert not captured.timed_out and proc.returncode == 0  # the flood never blocked the writer


def test_deadline_kills_and_reports(io: IoDir) -> None:
    proc, ended = container(io, "exec >stdout; echo before; exec sleep 30")
    killed: list[bool] = []

    def kill() -> None:
        killed.append(True)
        proc.kill()

    started = time.monotonic()
    captured = io.collect(100, ended, time.monotonic() + 0.5, kill=kill)
    os.close(ended)
    assert killed == [True] and captured.timed_out
    assert captured.stdout == b"before\n"
    assert time.monotonic() - started < 5


def test_a_stream_nobody_opened_reads_empty(io: IoDir) -> None:
    proc, ended = container(io, "true")
    captured = io.collect(100, ended, time.monotonic() + 20, kill=proc.kill)
    os.close(ended)
    assert (captured.stdout, captured.channel, captured.status) == (b"", b"", b"")


@needs_root
def test_fifos_belong_to_the_sandbox_user() -> None:
    folder = IoDir(b"", owner=(65534, 65534))
    try:
        owners = {(folder.io / n).stat().st_uid for n in STREAMS}
        assert owners == {65534}
        assert (folder.io / "stdin").stat().st_uid == 0
    finally:
        folder.close()


@needs_root
def test_lend_chowns_for_the_block_and_restores(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "a").mkdir(parents=True)
    (tree / "a" / "f").write_text("x")
    os.chown(tree / "a" / "f", 1234, 4321)
    single = tmp_path / "single"
    single.write_text("y")
    with lend([str(tree), str(single)], (65534, 65534)):
        seen = {p.stat().st_uid for p in (tree, tree / "a", tree / "a" / "f", single)}
        assert seen == {65534}
        (tree / "a" / "new").write_text("z")
        os.chown(tree / "a" / "new", 65534, 65534)  # as the sandbox would create it
        (tree / "link").symlink_to("/etc/passwd")
        os.lchown(tree / "link", 65534, 65534)
    owners = {
        p.name: (p.lstat().st_uid, p.lstat().st_gid)
        for p in (tree, tree / "a", tree / "a" / "f", tree / "a" / "new", tree / "link", single)
    }
    assert owners == {
        "tree": (0, 0),
        "a": (0, 0),
        "f": (1234, 4321),
        "new": (0, 0),
        "link": (0, 0),
        "single": (0, 0),
    }


def test_lend_without_an_owner_changes_nothing(tmp_path: Path) -> None:
    before = tmp_path.stat().st_uid
    with lend([str(tmp_path)], None):
        assert tmp_path.stat().st_uid == before
