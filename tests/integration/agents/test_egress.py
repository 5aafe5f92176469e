"""The `--allow-host` machinery: host rules, the host-side filtering proxy and the in-sandbox relay.

Every network path here is real: servers on the host's loopback, the proxy on a real Unix socket,
the relay as a real process.  Nothing listens anywhere but on 127.0.0.1 or in a private directory.
"""

from __future__ import annotations

import ast
import contextlib
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from replicate.agents import egress_relay
from replicate.agents.egress import (
    BadRequest,
    EgressProxy,
    EgressRecord,
    HostRule,
    parse_allow_host,
    parse_allow_hosts,
    parse_request,
)
from replicate.agents.protocol import AgentConfig, agent_env, proxy_env, relay_path, run_agent
from replicate.agents.workspace import make_workspace
from replicate.jail.calls import RepoContext
from replicate.sandbox.base import Sandbox
from tests.integration.minted import Tiny

# --- host rules --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("example.com", HostRule("example.com")),
        ("API.Example.COM.", HostRule("api.example.com")),
        ("example.com:443", HostRule("example.com", 443)),
        (" 127.0.0.1:8080 ", HostRule("127.0.0.1", 8080)),
        ("localhost", HostRule("localhost")),
        ("[::1]:8443", HostRule("::1", 8443)),
        ("[::1]", HostRule("::1")),
        ("0:0::1", HostRule("::1")),
        ("my_host-1.internal", HostRule("my_host-1.internal")),
    ],
)
def test_parse_allow_host(text: str, rule: HostRule) -> None:
    assert parse_allow_host(text) == rule


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty host"),
        ("   ", "empty host"),
        ("https://api.openai.com", "not a URL"),
        ("example.com/v1", "not a URL"),
        ("example.com:", "port must be a number"),
        ("example.com:https", "port must be a number"),
        ("example.com:0", "port must be a number"),
        ("example.com:65536", "port must be a number"),
        ("example.com:-1", "port must be a number"),
        ("example.com:٣", "port must be a number"),
        (":443", "not a host name"),
        ("exa mple.com", "not a host name"),
        ("*.example.com", "not a host name"),
        ("-bad.example.com", "not a host name"),
        ("a..b", "not a host name"),
        ("x" * 64 + ".com", "not a host name"),
        ("[::1", "bracketed IPv6"),
        ("[::1]443", "bracketed IPv6"),
        ("[nothex]:1", "IPv6 address only"),
        ("[1:2]:1", "not a host name"),
        ("1:2:3", "not a host name"),
    ],
)
def test_malformed_allow_host(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_allow_host(text)


def test_parse_allow_hosts_names_the_bad_value_and_drops_duplicates() -> None:
    with pytest.raises(ValueError, match=r"^--allow-host 'a:b': port must be"):
        parse_allow_hosts(["ok.example", "a:b"])
    rules = parse_allow_hosts(["a.example", "A.example.", "a.example:80", "[::1]:5"])
    assert rules == (HostRule("a.example"), HostRule("a.example", 80), HostRule("::1", 5))
    assert [str(r) for r in rules] == ["a.example", "a.example:80", "[::1]:5"]
    assert all(parse_allow_host(str(r)) == r for r in rules)


def test_host_alone_allows_every_port_host_and_port_only_that_port() -> None:
    any_port, one_port = HostRule("example.com"), HostRule("example.com", 443)
    assert any_port.matches("example.com", 80) and any_port.matches("EXAMPLE.com.", 8443)
    assert one_port.matches("example.com", 443)
    assert not one_port.matches("example.com", 80)
    for other in ("api.example.com", "example.com.evil", "xexample.com", "127.0.0.1"):
        assert not any_port.matches(other, 443), other
    assert not HostRule("127.0.0.1").matches("localhost", 80)
    assert HostRule("::1", 8).matches("[0::1]", 8)


# --- request parsing ---------------------------------------------------------------------------


def test_parse_connect_keeps_what_follows_the_head() -> None:
    request = parse_request(b"CONNECT Api.Example.com:443 HTTP/1.1\r\nHost: x\r\n\r\nhello")
    assert (request.host, request.port, request.head, request.rest) == (
        "Api.Example.com",
        443,
        None,
        b"hello",
    )
    assert request.target == "api.example.com:443"
    v6 = parse_request(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n")
    assert (v6.host, v6.port, v6.target) == ("::1", 8443, "[::1]:8443")


def test_parse_absolute_form_rewrites_to_origin_form() -> None:
    raw = (
        b"POST http://example.com:8080/a/b?q=1#frag HTTP/1.1\r\nHost: example.com:8080\r\n"
        b"Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\n"
        b"Connection: keep-alive\r\nContent-Length: 4\r\n\r\nbody"
    )
    request = parse_request(raw)
    assert (request.host, request.port, request.rest) == ("example.com", 8080, b"body")
    assert request.head == (
        b"POST /a/b?q=1 HTTP/1.1\r\nHost: example.com:8080\r\nContent-Length: 4\r\n"
        b"Connection: close\r\n\r\n"
    )
    assert parse_request(b"GET http://example.com HTTP/1.0\r\n\r\n").port == 80
    assert parse_request(b"GET http://example.com HTTP/1.0\r\n\r\n").head == (
        b"GET / HTTP/1.0\r\nConnection: close\r\n\r\n"
    )


@pytest.mark.parametrize(
    "raw",
    [
        b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",  # origin form: not a proxy request
        b"GET https://example.com/ HTTP/1.1\r\n\r\n",  # TLS must go through CONNECT
        b"GET ftp://example.com/ HTTP/1.1\r\n\r\n",
        b"GET http://example.com:99999/ HTTP/1.1\r\n\r\n",
        b"CONNECT example.com HTTP/1.1\r\n\r\n",
        b"CONNECT example.com:0 HTTP/1.1\r\n\r\n",
        b"CONNECT example.com:443 SPDY/3\r\n\r\n",
        b"garbage\r\n\r\n",
    ],
)
def test_bad_requests(raw: bytes) -> None:
    with pytest.raises(BadRequest) as caught:
        parse_request(raw)
    assert caught.value.status == 400


# --- the proxy, against real servers on the host's loopback ------------------------------------


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"hello {cast(Counting, self.server).port} {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class Counting(http.server.ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Hello)
        self.connections = 0
        self.port = self.server_address[1]

    def get_request(self) -> tuple[socket.socket, object]:
        self.connections += 1
        return super().get_request()


@contextlib.contextmanager
def http_server() -> Iterator[Counting]:
    server = Counting()
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextlib.contextmanager
def echo_server() -> Iterator[int]:
    """A plain TCP server that echoes, upper-cased, until the client half-closes, then says bye."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = listener.accept()
                with conn:
                    while data := conn.recv(4096):
                        conn.sendall(data.upper())
                    conn.sendall(b"bye")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()


def ask(proxy: EgressProxy, raw: bytes, *, half_close: bool = True) -> bytes:
    """Send `raw` to the proxy's socket and read everything it answers."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(proxy.socket_path)
        sock.sendall(raw)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def get(port: int, path: str = "/x") -> bytes:
    return f"GET http://127.0.0.1:{port}{path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()


def egress_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("egress")]


def test_allowed_plain_http_passes_and_others_get_403_without_a_connection() -> None:
    with http_server() as a, http_server() as b:
        with EgressProxy(parse_allow_hosts([f"127.0.0.1:{a.port}"])) as proxy:
            allowed = ask(proxy, get(a.port, "/p?q=1"), half_close=False)
            denied = ask(proxy, get(b.port))
            unknown = ask(proxy, b"CONNECT nowhere.invalid:443 HTTP/1.1\r\n\r\n")
            records = proxy.records()
        assert allowed.startswith(b"HTTP/1.0 200") and allowed.endswith(
            f"hello {a.port} /p?q=1".encode()
        )
        assert denied.startswith(b"HTTP/1.1 403 Forbidden")
        assert f"127.0.0.1:{b.port} is not an --allow-host target".encode() in denied
        assert unknown.startswith(b"HTTP/1.1 403")
        assert (a.connections, b.connections) == (1, 0)
    assert records == (
        EgressRecord(f"127.0.0.1:{a.port}", True, 1),
        EgressRecord(f"127.0.0.1:{b.port}", False, 1),
        EgressRecord("nowhere.invalid:443", False, 1),
    )


def test_a_denied_target_is_never_resolved(monkeypatch: pytest.MonkeyPatch) -> None:
    looked_up: list[object] = []
    real = socket.getaddrinfo

    def spy(host: object, *args: object, **kwargs: object) -> object:
        looked_up.append(host)
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", spy)
    with http_server() as a, EgressProxy([HostRule("127.0.0.1", a.port)]) as proxy:
        assert ask(proxy, get(1, "/")).startswith(b"HTTP/1.1 403")
        assert ask(proxy, b"CONNECT example.org:443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403")
        assert looked_up == []
        assert ask(proxy, get(a.port), half_close=False).startswith(b"HTTP/1.0 200")
        assert looked_up == ["127.0.0.1"]


def test_connect_tunnels_a_byte_stream_both_ways() -> None:
    with (
        echo_server() as port,
        EgressProxy([HostRule("127.0.0.1")]) as proxy,
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock,
    ):
        sock.settimeout(10)
        sock.connect(proxy.socket_path)
        sock.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\nearly ".encode())
        sock.sendall(bytes(range(256)) * 64)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, stream = answer.partition(b"\r\n\r\n")
    assert head == b"HTTP/1.1 200 Connection established"
    assert stream == b"EARLY " + (bytes(range(256)) * 64).upper() + b"bye"


def test_unreachable_allowed_target_is_502_and_malformed_is_400() -> None:
    free = socket.create_server(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    with EgressProxy([HostRule("127.0.0.1")]) as proxy:
        assert ask(proxy, get(port)).startswith(b"HTTP/1.1 502 Bad Gateway")
        assert ask(proxy, b"hello\r\n\r\n").startswith(b"HTTP/1.1 400 Bad Request")
        too_big = b"GET http://127.0.0.1/ HTTP/1.1\r\nX: " + b"a" * 70_000
        assert ask(proxy, too_big).startswith(b"HTTP/1.1 431")
        assert [r.target for r in proxy.records()] == [f"127.0.0.1:{port}", "(malformed request)"]


def test_connections_beyond_the_cap_get_503() -> None:
    with echo_server() as port, EgressProxy([HostRule("127.0.0.1")], max_connections=2) as proxy:
        held = []
        for _ in range(2):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(10)
            sock.connect(proxy.socket_path)
            sock.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
            assert sock.recv(100).startswith(b"HTTP/1.1 200")
            held.append(sock)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as third:
            third.settimeout(10)
            third.connect(proxy.socket_path)
            answer = b""
            while chunk := third.recv(100):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 503 Service Unavailable")
        assert answer.endswith(b"\r\n\r\ntoo many connections\n")
        for sock in held:
            sock.close()
        deadline = time.monotonic() + 5
        while len(egress_threads()) > 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ask(proxy, b"x\r\n\r\n").startswith(b"HTTP/1.1 400")  # a slot is free again


def test_close_cuts_open_tunnels_joins_threads_and_removes_the_socket() -> None:
    before = set(threading.enumerate())
    with echo_server() as port:
        proxy = EgressProxy([HostRule("127.0.0.1")])
        proxy.start()
        path = Path(proxy.socket_path)
        assert path.is_socket() and oct(path.parent.stat().st_mode & 0o777) == "0o700"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(10)
        sock.connect(proxy.socket_path)
        sock.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
        assert sock.recv(100).startswith(b"HTTP/1.1 200")
        idle = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        idle.connect(proxy.socket_path)  # never sends a request
        assert egress_threads()
        started = time.monotonic()
        proxy.close()
        assert time.monotonic() - started < 5
        assert sock.recv(100) == b""  # the tunnel was cut
        sock.close()
        idle.close()
    assert not path.exists() and not path.parent.exists()
    assert egress_threads() == []
    assert not [t for t in set(threading.enumerate()) - before if "copy" in t.name]


# --- the relay ---------------------------------------------------------------------------------


def test_relay_is_standard_library_only() -> None:
    tree = ast.parse(Path(relay_path()).read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "no relative imports"
            imported.add((node.module or "").split(".")[0])
    assert imported and imported <= set(sys.stdlib_module_names) | {"__future__"}, imported


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port: int = sock.getsockname()[1]
        return port


def relay(
    socket_path: str,
    port: int,
    *command: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-I", "-S", "-B", relay_path(), socket_path, str(port), "--", *command]
    pipe = subprocess.PIPE
    return subprocess.Popen(argv, stdout=pipe, stderr=pipe, env=env, cwd=cwd)


@pytest.mark.parametrize(("script", "code"), [("exit 0", 0), ("exit 7", 7), ("kill -9 $$", 137)])
def test_relay_passes_the_exit_code_through(tmp_path: Path, script: str, code: int) -> None:
    proc = relay(str(tmp_path / "none.sock"), 0, "/bin/sh", "-c", script)
    assert proc.wait(timeout=10) == code


def test_relay_forwards_bytes_to_the_socket_and_passes_env_and_stdout(tmp_path: Path) -> None:
    path = str(tmp_path / "up.sock")
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    upstream.bind(path)
    upstream.listen(4)

    def echo() -> None:
        conn, _ = upstream.accept()
        with conn:
            while data := conn.recv(4096):
                conn.sendall(data[::-1])

    threading.Thread(target=echo, daemon=True).start()
    port = free_port()
    client = (
        "import os, socket, sys\n"
        f"s = socket.create_connection(('127.0.0.1', {port}), timeout=10)\n"
        "s.sendall(b'abc'); s.shutdown(socket.SHUT_WR)\n"
        "print(s.recv(100).decode(), os.environ['MARK'], os.getcwd())\n"
    )
    env = {"PATH": "/usr/bin:/bin", "MARK": "m1"}
    proc = relay(path, port, sys.executable, "-c", client, env=env, cwd=tmp_path)
    out, err = proc.communicate(timeout=20)
    upstream.close()
    assert proc.returncode == 0, err
    assert out.decode().split() == ["cba", "m1", str(tmp_path)]


def test_relay_exits_with_the_agent_even_with_connections_open(tmp_path: Path) -> None:
    path = str(tmp_path / "up.sock")
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    upstream.bind(path)
    upstream.listen(4)
    port = free_port()
    client = (  # opens a connection that the upstream never answers, then exits 5
        "import socket, sys\n"
        f"s = socket.create_connection(('127.0.0.1', {port}), timeout=10)\n"
        "s.sendall(b'x'); sys.exit(5)\n"
    )
    proc = relay(path, port, sys.executable, "-c", client)
    assert proc.wait(timeout=10) == 5
    upstream.close()


def test_relay_passes_sigterm_to_the_agent(tmp_path: Path) -> None:
    proc = relay(str(tmp_path / "none.sock"), 0, "/bin/sh", "-c", "echo up; exec sleep 30")
    assert proc.stdout is not None and proc.stdout.readline() == b"up\n"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 128 + signal.SIGTERM


def test_relay_usage_errors() -> None:
    with pytest.raises(ValueError, match="usage"):
        egress_relay.parse_args(["sock", "1", "sh"])
    with pytest.raises(ValueError, match="out of range"):
        egress_relay.parse_args(["sock", "70000", "--", "sh"])
    assert egress_relay.parse_args(["s", "3128", "--", "a", "--", "b"]) == (
        "s",
        3128,
        ["a", "--", "b"],
    )


# --- wired into the agent run ------------------------------------------------------------------


def test_agent_env_has_proxy_variables_only_with_allow_hosts(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    hostile = {"HTTP_PROXY": "http://evil:1", "NO_PROXY": "*"}
    plain = agent_env(task, Path("/w"), tiny_ctx, AgentConfig("true", local_sandbox))
    assert not {k for k in plain if "proxy" in k.lower()}
    config = AgentConfig("true", local_sandbox, passed_env=hostile, allow_hosts=("example.com",))
    env = agent_env(task, Path("/w"), tiny_ctx, config)
    assert {k: v for k, v in env.items() if "proxy" in k.lower()} == proxy_env()
    assert env["HTTP_PROXY"] == env["https_proxy"] == "http://127.0.0.1:3128"
    assert env["NO_PROXY"] == env["no_proxy"] == ""


def test_run_agent_reaches_only_the_allowed_server(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox, tmp_path: Path
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    ws = make_workspace(task, tmp_path / "ws")
    script = (
        "import json, urllib.request\n"
        "def fetch(port):\n"
        "    try:\n"
        "        url = f'http://127.0.0.1:{port}/z'\n"
        "        return urllib.request.urlopen(url, timeout=10).read().decode()\n"
        "    except Exception as exc:\n"
        "        return str(exc)\n"
        "import sys\n"
        "print(json.dumps([fetch(int(p)) for p in sys.argv[1:]]))\n"
    )
    (ws / "fetch.py").write_text(script)
    with http_server() as a, http_server() as b:
        config = AgentConfig(
            f"python fetch.py {a.port} {b.port} > out.json",
            local_sandbox,
            timeout_s=60,
            allow_hosts=(f"127.0.0.1:{a.port}",),
        )
        outcome = run_agent(task, ws, tiny_ctx, config)
    assert outcome.status == "ok", outcome.log_tail
    assert json.loads((ws / "out.json").read_text()) == [
        f"hello {a.port} /z",
        "HTTP Error 403: Forbidden",
    ]
    assert outcome.egress == (
        EgressRecord(f"127.0.0.1:{a.port}", True, 1),
        EgressRecord(f"127.0.0.1:{b.port}", False, 1),
    )
    assert egress_threads() == []
    leftovers = [p for p in Path("/proc").glob("[0-9]*/cmdline") if _is_relay(p)]
    assert leftovers == []


def test_run_agent_refuses_allow_hosts_without_isolation(
    tiny: Tiny, tiny_ctx: RepoContext, tmp_path: Path
) -> None:
    from replicate.sandbox import get_sandbox

    config = AgentConfig("true", get_sandbox("plain"), allow_hosts=("example.com",))
    with pytest.raises(ValueError, match="isolating sandbox"):
        run_agent(tiny.task("tinypkg.core.clamp"), tmp_path, tiny_ctx, config)


def _is_relay(cmdline: Path) -> bool:
    try:
        return relay_path().encode() in cmdline.read_bytes() and os.getpid() != int(
            cmdline.parent.name
        )
    except OSError:
        return False
