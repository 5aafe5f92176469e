"""`replicate serve` in a subprocess on a free loopback port, for the server tests and the bench."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Server:
    url: str
    process: subprocess.Popen[str]


@contextmanager
def serving(batch: Path, *args: str, ready_s: float = 120) -> Iterator[Server]:
    """Start the server, wait for /health, stop it (by its own pid) afterwards."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    command = [sys.executable, "-m", "replicate", "serve", "--tasks", str(batch)]
    process = subprocess.Popen(
        [*command, "--port", str(port), *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + ready_s
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"server exited: {process.stderr.read() if process.stderr else ''}"
                )
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not become healthy")
            time.sleep(0.2)
        yield Server(url, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
