"""The host side of `--allow-host`: a filtering HTTP proxy on a Unix socket (docs/design.md §6).

The agent's sandbox keeps its own network namespace (nothing but loopback); the only way out is
this proxy's Unix socket, bound into the sandbox and reached through the relay
(``replicate.agents.egress_relay``) that listens on 127.0.0.1 there.  The proxy speaks:

- ``CONNECT host:port`` (HTTPS and any other TCP stream): answered ``200`` and tunnelled byte for
  byte when allowed;
- absolute-form plain HTTP (``GET http://host[:port]/path``, port 80 by default): the request is
  sent on in origin form with ``Connection: close``, one request per connection.

A target is allowed when a rule matches it: ``HOST`` allows every port of that host, ``HOST:PORT``
only that port.  Hosts compare exactly (case and a trailing dot aside; no subdomains, no
wildcards) as the client names them: ``localhost`` does not match ``127.0.0.1``.  Anything else is
answered ``403`` without a name lookup: the proxy resolves and connects to allowed targets only.
Concurrent connections are capped (``503`` beyond), and every decision is counted by target for
the run's record (`EgressProxy.records`) and logged on the ``replicate.agents.egress`` logger.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import re
import selectors
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

from replicate.agents.egress_relay import pump
from replicate.scratch import make_dir, remove_dir

logger = logging.getLogger(__name__)

MAX_HEAD_BYTES = 64 * 1024
MAX_TARGETS = 256  # distinct targets recorded; the rest are counted under OTHER
OTHER = "(other targets)"
MALFORMED = "(malformed request)"
SOCKET_NAME = "proxy.sock"
_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authorization"})


@dataclass(frozen=True)
class HostRule:
    """One `--allow-host` value: a host (lower case, IPv6 without brackets) and maybe a port."""

    host: str
    port: int | None = None

    def matches(self, host: str, port: int) -> bool:
        return self.host == normalise_host(host) and self.port in (None, port)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port is None else f"{host}:{self.port}"


@dataclass(frozen=True)
class EgressRecord:
    """How many connections asked for `target` (``host:port``) and whether it was allowed."""

    target: str
    allowed: bool
    count: int


def normalise_host(host: str) -> str:
    """Lower case, no trailing dot, IPv6 without brackets and in compressed form."""
    bare = host.strip().lower().rstrip(".")
    if bare.startswith("[") and bare.endswith("]"):
        bare = bare[1:-1]
    if ":" in bare:
        with contextlib.suppress(ValueError):
            return ipaddress.IPv6Address(bare).compressed
    return bare


def parse_allow_host(text: str) -> HostRule:
    """``HOST``, ``HOST:PORT``, ``[IPV6]`` or ``[IPV6]:PORT``; ValueError saying what is wrong."""
    raw = text.strip()
    if not raw:
        raise ValueError("empty host")
    if "://" in raw or "/" in raw:
        raise ValueError("expected HOST or HOST:PORT, not a URL")
    host, port = _split_host_port(raw)
    if raw.startswith("[") and ":" not in host:
        raise ValueError("brackets hold an IPv6 address only")
    name = normalise_host(host)
    if not _valid_host(name):
        raise ValueError(f"not a host name or IP address: {host!r}")
    return HostRule(name, None if port is None else _parse_port(port))


def parse_allow_hosts(texts: Iterable[str]) -> tuple[HostRule, ...]:
    """Every value parsed (ValueError naming the first bad one), duplicates dropped."""
    rules: list[HostRule] = []
    for text in texts:
        try:
            rule = parse_allow_host(text)
        except ValueError as exc:
            raise ValueError(f"--allow-host {text!r}: {exc}") from None
        if rule not in rules:
            rules.append(rule)
    return tuple(rules)


def _split_host_port(raw: str) -> tuple[str, str | None]:
    if raw.startswith("["):
        host, bracket, rest = raw[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError("malformed bracketed IPv6 address")
        return host, rest[1:] if rest else None
    if raw.count(":") > 1:  # a bare IPv6 address has no port
        return raw, None
    host, colon, port = raw.partition(":")
    return host, port if colon else None


def _parse_port(text: str) -> int:
    if not text.isascii() or not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"port must be a number from 1 to 65535, not {text!r}")
    return int(text)


def _valid_host(name: str) -> bool:
    if ":" in name:
        try:
            ipaddress.IPv6Address(name)
        except ValueError:
            return False
        return True
    return 0 < len(name) <= 253 and all(_LABEL.match(label) for label in name.split("."))


@dataclass(frozen=True)
class _Request:
    """What the client asked for: `head` is sent on (None for CONNECT), `rest` follows it."""

    host: str
    port: int
    head: bytes | None
    rest: bytes

    @property
    def target(self) -> str:
        return str(HostRule(normalise_host(self.host), self.port))


class BadRequest(ValueError):
    """A request the proxy does not serve; the message is the status line's reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def parse_request(data: bytes) -> _Request:
    """The target and the rewritten head of one proxy request (head and what follows it)."""
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(400, "Bad Request")
    method, uri, version = parts
    if method == "CONNECT":
        host, port = _split_host_port(uri)
        if port is None:
            raise BadRequest(400, "Bad Request")
        return _Request(host, _request_port(port), None, rest)
    url = urlsplit(uri)
    if url.scheme != "http" or not url.hostname:
        raise BadRequest(400, "Bad Request")
    try:
        http_port = url.port or 80
    except ValueError:
        raise BadRequest(400, "Bad Request") from None
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    headers = [line for line in lines[1:] if _header_name(line) not in _HOP_BY_HOP]
    new_head = "\r\n".join([f"{method} {path} {version}", *headers, "Connection: close"])
    return _Request(url.hostname, http_port, (new_head + "\r\n\r\n").encode("latin-1"), rest)


def _request_port(text: str) -> int:
    try:
        return _parse_port(text)
    except ValueError:
        raise BadRequest(400, "Bad Request") from None


def _header_name(line: str) -> str:
    return line.partition(":")[0].strip().lower()


def _response(status: int, reason: str, body: str = "") -> bytes:
    data = body.encode()
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
    return f"{head}Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode() + data


def _refuse(conn: socket.socket, answer: bytes) -> None:
    """Answer without waiting for the request; what arrived is read first, so no reset."""
    with contextlib.suppress(OSError):
        conn.setblocking(False)
        conn.send(answer)
        conn.shutdown(socket.SHUT_WR)
        while conn.recv(MAX_HEAD_BYTES):
            pass
    conn.close()


class EgressProxy:
    """The filtering proxy for one agent run; use as a context manager (start, then close).

    `socket_path` (in a private temporary directory) is what the sandbox binds; `close` cuts every
    connection, joins every thread and removes the socket and its directory.
    """

    def __init__(
        self,
        rules: Iterable[HostRule],
        *,
        max_connections: int = 64,
        connect_timeout_s: float = 10.0,
        head_timeout_s: float = 30.0,
    ) -> None:
        self.rules = tuple(rules)
        self.max_connections = max_connections
        self.connect_timeout_s = connect_timeout_s
        self.head_timeout_s = head_timeout_s
        self.socket_path = ""
        self._dir = ""
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, bool], int] = {}
        self._open: set[socket.socket] = set()
        self._threads: set[threading.Thread] = set()
        self._slots = threading.BoundedSemaphore(max_connections)
        self._closing = threading.Event()
        self._listener: socket.socket | None = None
        self._wake: tuple[socket.socket, socket.socket] | None = None
        self._acceptor: threading.Thread | None = None

    def __enter__(self) -> EgressProxy:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def allows(self, host: str, port: int) -> bool:
        return any(rule.matches(host, port) for rule in self.rules)

    def records(self) -> tuple[EgressRecord, ...]:
        """Every target asked for so far with its count, allowed ones first."""
        with self._lock:
            items = sorted(self._counts.items(), key=lambda kv: (not kv[0][1], kv[0][0]))
        return tuple(EgressRecord(target, allowed, n) for (target, allowed), n in items)

    def start(self) -> None:
        self._dir = str(make_dir("replicate-egress-"))
        self.socket_path = os.path.join(self._dir, SOCKET_NAME)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(self.socket_path)
            os.chmod(self.socket_path, 0o666)  # any uid of the sandbox; the directory is ours
            listener.listen(self.max_connections)
        except OSError:
            listener.close()
            remove_dir(Path(self._dir))
            raise
        self._listener = listener
        self._wake = socket.socketpair()
        self._acceptor = threading.Thread(target=self._accept_loop, name="egress-accept")
        self._acceptor.start()

    def close(self) -> None:
        """Stop accepting, cut every connection, join every thread, remove the socket."""
        self._closing.set()
        if self._wake is not None:
            with contextlib.suppress(OSError):
                self._wake[1].send(b"x")
        if self._acceptor is not None:
            self._acceptor.join()
        with self._lock:
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            threads = list(self._threads)
        for thread in threads:
            thread.join()
        for sock in (self._listener, *(self._wake or ())):
            if sock is not None:
                sock.close()
        self._listener = self._wake = self._acceptor = None
        if self._dir:
            remove_dir(Path(self._dir))

    def _accept_loop(self) -> None:
        assert self._listener is not None and self._wake is not None
        with selectors.DefaultSelector() as sel:
            sel.register(self._listener, selectors.EVENT_READ)
            sel.register(self._wake[0], selectors.EVENT_READ)
            while not self._closing.is_set():
                for key, _ in sel.select():
                    if key.fileobj is self._listener and not self._closing.is_set():
                        self._accept_one()

    def _accept_one(self) -> None:
        assert self._listener is not None
        try:
            conn, _ = self._listener.accept()
        except OSError:
            return
        if not self._slots.acquire(blocking=False):
            logger.warning("egress: too many connections (%d), refused one", self.max_connections)
            _refuse(conn, _response(503, "Service Unavailable", "too many connections\n"))
            return
        thread = threading.Thread(target=self._serve, args=(conn,), name="egress-conn")
        with self._lock:
            self._open.add(conn)
            self._threads.add(thread)
        thread.start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            self._handle(conn)
        except OSError:
            pass
        finally:
            with self._lock:
                self._open.discard(conn)
                self._threads.discard(threading.current_thread())
            conn.close()
            self._slots.release()

    def _handle(self, conn: socket.socket) -> None:
        """Read the request, decide, and answer it or connect and tunnel it."""
        try:
            request = parse_request(self._read_head(conn))
        except BadRequest as exc:
            self._count(MALFORMED, allowed=False)
            conn.sendall(_response(exc.status, str(exc), f"{exc}\n"))
            return
        if not self.allows(request.host, request.port):
            self._count(request.target, allowed=False)
            body = f"replicate: {request.target} is not an --allow-host target\n"
            conn.sendall(_response(403, "Forbidden", body))
            return
        self._count(request.target, allowed=True)
        upstream = self._connect(request)
        if upstream is None:
            conn.sendall(_response(502, "Bad Gateway", f"cannot reach {request.target}\n"))
            return
        try:
            if request.head is None:
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                upstream.sendall(request.head)
            upstream.sendall(request.rest)
            conn.settimeout(None)
            pump(conn, upstream)
        finally:
            with self._lock:
                self._open.discard(upstream)
            upstream.close()

    def _read_head(self, conn: socket.socket) -> bytes:
        conn.settimeout(self.head_timeout_s)
        data = b""
        while b"\r\n\r\n" not in data:
            if len(data) > MAX_HEAD_BYTES:
                raise BadRequest(431, "Request Header Fields Too Large")
            chunk = conn.recv(MAX_HEAD_BYTES)
            if not chunk:
                raise BadRequest(400, "Bad Request")
            data += chunk
        return data

    def _connect(self, request: _Request) -> socket.socket | None:
        host = normalise_host(request.host)
        try:
            upstream = socket.create_connection((host, request.port), self.connect_timeout_s)
        except OSError as exc:
            logger.info("egress: cannot reach %s: %s", request.target, exc)
            return None
        upstream.settimeout(None)
        with self._lock:
            if self._closing.is_set():
                upstream.close()
                return None
            self._open.add(upstream)
        return upstream

    def _count(self, target: str, *, allowed: bool) -> None:
        logger.info("egress %s: %s", "allowed" if allowed else "denied", target)
        with self._lock:
            key = (target, allowed)
            if key not in self._counts and len(self._counts) >= MAX_TARGETS:
                key = (OTHER, allowed)
            self._counts[key] = self._counts.get(key, 0) + 1
