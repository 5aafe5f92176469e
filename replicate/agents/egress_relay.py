"""The sandbox's end of `--allow-host`: a TCP relay on 127.0.0.1 to the host's egress proxy.

Shipped as source into the sandbox (like the runner) and started by `agents.protocol` as
``python -I -S -B egress_relay.py SOCKET PORT -- COMMAND [ARG...]``; standard library only, nothing
from ``replicate``, nothing done at import time.

It listens on 127.0.0.1:PORT (in the sandbox's own network namespace, where nothing else is
reachable), starts COMMAND as its child with the environment and file descriptors unchanged, and
forwards every accepted connection byte for byte to the Unix socket SOCKET, where the host-side
filtering proxy (``replicate.agents.egress``) listens.  It exits as soon as COMMAND exits, with
COMMAND's exit code (128 + N when signal N killed it, as a shell reports), cutting whatever
connections remain: the relay never outlives the agent.  SIGTERM, SIGINT and SIGHUP sent to the
relay are passed on to COMMAND.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence

CHUNK = 1 << 16
MAX_CONNECTIONS = 128
BACKLOG = 128
FORWARDED_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP")
USAGE = "usage: egress_relay.py SOCKET PORT -- COMMAND [ARG...]"


def copy(source: socket.socket, sink: socket.socket) -> None:
    """Copy one direction until end of stream, passed on as a half-close of `sink`.

    An error on either side shuts both sockets down, which also ends the other direction.
    """
    try:
        while True:
            data = source.recv(CHUNK)
            if not data:
                break
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def pump(first: socket.socket, second: socket.socket) -> None:
    """Copy bytes both ways between two connected sockets until both directions have ended.

    One direction runs in a helper thread, the other in the caller's; neither can stall the other.
    The sockets stay open (the caller closes them).
    """
    back = threading.Thread(target=copy, args=(second, first), daemon=True)
    back.start()
    copy(first, second)
    back.join()


def parse_args(argv: Sequence[str]) -> tuple[str, int, list[str]]:
    """SOCKET, PORT and COMMAND from ``SOCKET PORT -- COMMAND...``; ValueError when malformed."""
    if len(argv) < 4 or argv[2] != "--":
        raise ValueError(USAGE)
    port = int(argv[1])
    if not 0 <= port <= 65535:
        raise ValueError(f"port out of range: {port}")
    return argv[0], port, list(argv[3:])


def listen(port: int) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # close-on-exec by default
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(BACKLOG)
    return listener


def serve(listener: socket.socket, socket_path: str) -> None:
    """Accept forever; each connection is forwarded in its own thread, at most MAX_CONNECTIONS."""
    slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        if not slots.acquire(blocking=False):
            conn.close()
            continue
        threading.Thread(target=forward, args=(conn, socket_path, slots), daemon=True).start()


def forward(conn: socket.socket, socket_path: str, slots: threading.BoundedSemaphore) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(socket_path)
        pump(conn, upstream)
    except OSError:
        pass
    finally:
        upstream.close()
        conn.close()
        slots.release()


def start(command: list[str]) -> subprocess.Popen[bytes]:
    """COMMAND with our environment, working directory and descriptors; signals restored.

    SIGTERM, SIGINT and SIGHUP are passed on to it; one arriving before it exists ends the relay
    as that signal would have.
    """
    started: list[subprocess.Popen[bytes]] = []

    def pass_on(signum: int, _frame: object) -> None:
        if not started:
            os._exit(128 + signum)
        started[0].send_signal(signum)

    for name in FORWARDED_SIGNALS:
        signal.signal(getattr(signal, name), pass_on)
    started.append(subprocess.Popen(command, close_fds=False, restore_signals=True))
    return started[0]


def exit_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def main(argv: Sequence[str]) -> int:
    try:
        socket_path, port, command = parse_args(argv)
        listener = listen(port)
    except (ValueError, OSError) as exc:
        print(f"egress relay: {exc}", file=sys.stderr)
        return 125
    try:
        child = start(command)
    except FileNotFoundError as exc:
        print(f"egress relay: {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127
    except OSError as exc:
        print(f"egress relay: {command[0]}: {exc.strerror}", file=sys.stderr)
        return 126
    threading.Thread(target=serve, args=(listener, socket_path), daemon=True).start()
    return exit_code(child.wait())


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # at once: daemon threads may still hold connections
