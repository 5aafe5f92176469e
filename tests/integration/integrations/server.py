"""`replicate serve` in a subprocess on a free loopback port, for the server tests and the bench."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx

REPO_ROOT = Path(__file__).resolve().parents[3]
T = TypeVar("T")


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
    # this checkout first, then the caller's own path (a package tried out before it is pinned)
    paths = [str(REPO_ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
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


@contextmanager
def serving_in_process(app: Any, ready_s: float = 120) -> Iterator[str]:
    """`app` on uvicorn in a thread of this process (so a test can monkeypatch it), on a free
    loopback port; its URL once /health answers; stopped (and its thread joined) afterwards."""
    import uvicorn

    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + ready_s
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the in-process server did not start")
            time.sleep(0.05)
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=60)


PROBE = """
import socket, sys, time
port, every, ends = int(sys.argv[1]), float(sys.argv[2]), time.monotonic() + float(sys.argv[3])
while time.monotonic() < ends:
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET /health HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    ok = answer.startswith(b"HTTP/1.1 200")
    print(f"{time.monotonic() - started:.6f}" if ok else "failed", flush=True)
    time.sleep(every)
"""


def health_during(
    url: str, work: Callable[[], T], every_s: float = 0.02, lifetime_s: float = 600
) -> tuple[T, list[float]]:
    """`work()`'s result, and the latencies of GET /health asked every `every_s` while it ran,
    by a process of its own: neither the work nor this process's interpreter lock (a server in
    this process holding it) delays the asking.  The prober stops by itself after `lifetime_s`."""
    port = url.rsplit(":", 1)[1]
    command = [sys.executable, "-c", PROBE, port, str(every_s), str(lifetime_s)]
    prober = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert prober.stdout is not None
    first = prober.stdout.readline()  # asking already, before the work starts
    try:
        result = work()
        time.sleep(0.5)  # a question asked while the work ran is answered and counted
    finally:
        prober.terminate()
        rest, _ = prober.communicate()
    lines = (first + rest).split()
    if "failed" in lines or not lines:
        raise RuntimeError("/health failed")
    return result, [float(line) for line in lines]
