"""`replicate run --allow-host`: the agent reaches the named host:port through the filtering proxy,
and nothing else — checked with the real CLI, the real sandbox and real servers on the host's
loopback (started here, random ports).

The agent is `python -c` with urllib (which honours HTTP_PROXY), raw sockets and curl (when the
machine has it); it writes what it saw into its workspace (`--keep-workspaces`), read back here.
The positive control runs the same agent on the `plain` backend (no sandbox, no proxy): it reaches
server B directly, so the refusal inside the sandbox is the proxy's doing, not a broken server.
"""

from __future__ import annotations

import contextlib
import errno
import http.server
import json
import shlex
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from replicate.core.records import ResultRow
from tests.e2e.conftest import REPO_ROOT, replicate

TASK = "samplelib__samplelib.accounts.Account.deposit__725c09fd87"
RESULT_FILE = "egress.json"

AGENT = r"""
import errno, http.client, json, os, shutil, socket, subprocess, sys, urllib.error, urllib.request
A, B, ECHO, HOST_IP = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
seen = {"proxy_vars": sorted(k for k in os.environ if "proxy" in k.lower())}

def fetch(port):
    try:
        return urllib.request.urlopen(f"http://127.0.0.1:{port}/ping", timeout=10).read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"

def direct(host, port):
    try:
        socket.create_connection((host, port), timeout=5).close()
        return "connected"
    except OSError as exc:
        return exc.errno

def echo():
    proxy = os.environ.get("HTTPS_PROXY")
    try:
        if proxy:
            host, port = proxy.rsplit("/", 1)[-1].split(":")
            conn = http.client.HTTPConnection(host, int(port), timeout=10)
            conn.set_tunnel("127.0.0.1", ECHO)
            conn.connect()
            sock = conn.sock
        else:
            sock = socket.create_connection(("127.0.0.1", ECHO), timeout=10)
        sock.sendall(b"through the tunnel")
        sock.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := sock.recv(4096):
            data += chunk
        return data.decode()
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"

def curl(port):
    if shutil.which("curl") is None:
        return None
    done = subprocess.run(
        ["curl", "-s", "-m", "10", "-w", " %{http_code}", f"http://127.0.0.1:{port}/curl"],
        capture_output=True, text=True,
    )
    return done.stdout

seen["a"], seen["b"] = fetch(A), fetch(B)
seen["direct_loopback"] = direct("127.0.0.1", A)
seen["direct_host_ip"] = direct(HOST_IP, A)
seen["echo"] = echo()
seen["curl_a"], seen["curl_b"] = curl(A), curl(B)
with open("egress.json", "w") as out:
    json.dump(seen, out)
"""


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"hello from {cast(Server, self.server).name} {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class Server(http.server.ThreadingHTTPServer):
    def __init__(self, name: str) -> None:
        super().__init__(("127.0.0.1", 0), _Hello)
        self.name = name
        self.port: int = self.server_address[1]
        self.connections = 0

    def get_request(self) -> tuple[socket.socket, Any]:
        self.connections += 1
        return super().get_request()


@dataclass(frozen=True)
class Servers:
    a: Server
    b: Server
    echo: int


@contextlib.contextmanager
def serving() -> Iterator[Servers]:
    """Two HTTP servers and an echo server (upper-cases until the client half-closes)."""
    servers = [Server("A"), Server("B")]
    echo = socket.create_server(("127.0.0.1", 0))

    def echo_loop() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = echo.accept()
                with conn:
                    while data := conn.recv(4096):
                        conn.sendall(data.upper())

    threads = [threading.Thread(target=s.serve_forever, args=(0.05,)) for s in servers]
    threads.append(threading.Thread(target=echo_loop, daemon=True))
    for thread in threads:
        thread.start()
    try:
        yield Servers(servers[0], servers[1], echo.getsockname()[1])
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
        echo.close()


def host_ip() -> str:
    """The host's non-loopback address (a UDP connect sends nothing); loopback if it has none."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.255", 9))
            address: str = probe.getsockname()[0]
        except OSError:
            return "127.0.0.1"
    return address


def egress_dirs() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("replicate-egress-*")}


def relay_processes() -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            if b"egress_relay.py" in cmdline.read_bytes():
                found.append(cmdline.parent.name)
    return found


def run_agent(
    tmp: Path, servers: Servers, *extra: str, agent: str | None = None
) -> tuple[ResultRow, dict[str, Any] | None]:
    """One `replicate run` on TASK; the row and what the agent wrote, if anything."""
    out = tmp / "run"
    ports = f"{servers.a.port} {servers.b.port} {servers.echo} {host_ip()}"
    command = agent or f"python -c {shlex.quote(AGENT)} {ports}"
    done = replicate(
        "run",
        "--tasks",
        str(REPO_ROOT),
        "--task",
        TASK,
        "--agent",
        command,
        "--out",
        str(out),
        "--keep-workspaces",
        "--timeout",
        "120",
        *extra,
        timeout=600,
        cwd=REPO_ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    row = ResultRow.model_validate_json((out / "results.jsonl").read_text().splitlines()[-1])
    written = out / "workspaces" / f"{TASK}.0" / RESULT_FILE
    return row, json.loads(written.read_text()) if written.exists() else None


PROXY_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
PROXY_VARS = sorted([*PROXY_NAMES, *(name.lower() for name in PROXY_NAMES)])


def test_only_the_allowed_host_port_is_reachable(tmp_path: Path) -> None:
    dirs_before = egress_dirs()
    with serving() as servers:
        allow = ["--allow-host", f"127.0.0.1:{servers.a.port}"]
        allow += ["--allow-host", f"127.0.0.1:{servers.echo}"]
        row, seen = run_agent(tmp_path, servers, *allow)
        b_connections = servers.b.connections
    assert row.agent_status == "ok" and row.agent_exit_code == 0, row
    assert seen is not None
    assert seen["proxy_vars"] == PROXY_VARS
    assert seen["a"] == "hello from A /ping"
    assert seen["b"] == 403  # the proxy's answer
    assert b_connections == 0  # the proxy never even connected to B
    assert seen["direct_loopback"] == errno.ECONNREFUSED  # the sandbox's own, empty loopback
    assert seen["direct_host_ip"] in (errno.ENETUNREACH, errno.ECONNREFUSED)
    assert seen["echo"] == "THROUGH THE TUNNEL"  # CONNECT carries any byte stream
    if shutil.which("curl"):
        assert seen["curl_a"] == "hello from A /curl 200"
        assert seen["curl_b"].endswith(" 403")
    assert relay_processes() == []
    assert egress_dirs() - dirs_before == set()


def test_control_without_sandbox_reaches_server_b_directly(tmp_path: Path) -> None:
    with serving() as servers:
        row, seen = run_agent(tmp_path, servers, "--sandbox", "plain")
        b_connections = servers.b.connections
    assert row.agent_status == "ok", row
    assert seen is not None
    assert seen["proxy_vars"] == []
    assert seen["b"] == "hello from B /ping" and b_connections >= 1
    assert seen["a"] == "hello from A /ping"
    assert seen["direct_loopback"] == "connected"
    assert seen["echo"] == "THROUGH THE TUNNEL"


def test_without_allow_host_there_is_no_proxy_and_no_network(tmp_path: Path) -> None:
    with serving() as servers:
        row, seen = run_agent(tmp_path, servers)
        connections = servers.a.connections + servers.b.connections
    assert row.agent_status == "ok", row
    assert seen is not None
    assert seen["proxy_vars"] == []
    assert "Connection refused" in seen["a"] and "Connection refused" in seen["b"]
    assert seen["direct_loopback"] == errno.ECONNREFUSED
    assert seen["direct_host_ip"] in (errno.ENETUNREACH, errno.ECONNREFUSED)
    assert "Connection refused" in seen["echo"]
    assert connections == 0


def test_the_agent_exit_code_passes_through_the_relay(tmp_path: Path) -> None:
    with serving() as servers:
        row, _ = run_agent(
            tmp_path, servers, "--allow-host", "example.com", agent="sleep 0.1; exit 7"
        )
    assert (row.agent_status, row.agent_exit_code) == ("error", 7)
    assert relay_processes() == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("https://api.example.com", "--allow-host 'https://api.example.com': expected HOST"),
        ("example.com:port", "--allow-host 'example.com:port': port must be a number"),
        ("a b", "--allow-host 'a b': not a host name"),
    ],
)
def test_malformed_allow_host_is_a_one_line_error(tmp_path: Path, value: str, message: str) -> None:
    done = replicate(
        "run",
        "--tasks",
        str(REPO_ROOT),
        "--agent",
        "true",
        "--out",
        str(tmp_path / "run"),
        "--allow-host",
        value,
        cwd=REPO_ROOT,
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {message}"), done.stderr
    assert not (tmp_path / "run").exists()
