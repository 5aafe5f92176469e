"""A local chat-completions server for the built-in agent's tests: the real `openai` client talks
HTTP to it on 127.0.0.1, and a script decides each answer from the request it got.  Also two
endpoints that stall (`silent`, `dripping`), loopback only, each stopping by itself."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# request body -> (HTTP status, JSON body, extra headers)
Answer = tuple[int, dict[str, Any], dict[str, str]]
Script = Callable[[dict[str, Any]], Answer]


@dataclass
class FakeChat:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)


def completion(message: dict[str, Any], finish: str = "stop") -> Answer:
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }
    return 200, body, {}


def text(content: str) -> Answer:
    return completion({"role": "assistant", "content": content})


def tools(*calls: tuple[str, dict[str, str]]) -> Answer:
    tool_calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        for i, (name, args) in enumerate(calls)
    ]
    message = {"role": "assistant", "content": None, "tool_calls": tool_calls}
    return completion(message, "tool_calls")


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Answer:
    return status, {"error": {"message": message, "type": "test", "code": None}}, headers or {}


def step(request: dict[str, Any]) -> int:
    """How many answers the conversation already holds: 0 on the first call."""
    return sum(m.get("role") == "assistant" for m in request["messages"])


def tool_results(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m.get("role") == "tool"]


@contextmanager
def serve(script: Script) -> Iterator[FakeChat]:
    """The server for the block; `FakeChat.url` is the base URL (…/v1)."""
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            with lock:
                chat.requests.append(body)
                chat.paths.append(self.path)
                chat.headers.append({k.lower(): v for k, v in self.headers.items()})
                status, answer, extra = script(body)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    chat = FakeChat(url=f"http://127.0.0.1:{server.server_address[1]}/v1")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield chat
    finally:
        server.shutdown()
        server.server_close()


LIFETIME_S = 240.0  # a stalling endpoint below stops by itself after this, whatever the test does


@dataclass
class Stalling:
    """An endpoint that stalls every request; `stop()` ends it (and every connection) at once."""

    url: str
    stopped: threading.Event
    connections: list[float] = field(default_factory=list)  # when each was accepted

    def stop(self) -> None:
        self.stopped.set()


@contextmanager
def silent() -> Iterator[Stalling]:
    """Accepts connections on 127.0.0.1 and never answers (nor reads) until stopped."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    chat = Stalling(f"http://127.0.0.1:{listener.getsockname()[1]}/v1", threading.Event())
    held: list[socket.socket] = []
    ends = time.monotonic() + LIFETIME_S

    def hold() -> None:
        while not chat.stopped.is_set() and time.monotonic() < ends:
            try:
                held.append(listener.accept()[0])
                chat.connections.append(time.monotonic())
            except TimeoutError:
                continue
        listener.close()
        for connection in held:
            connection.close()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    try:
        yield chat
    finally:
        chat.stop()
        thread.join(timeout=10)


@contextmanager
def dripping() -> Iterator[Stalling]:
    """Answers 200 with its headers at once, then its body one byte a second until stopped."""
    stopped = threading.Event()
    ends = time.monotonic() + LIFETIME_S

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            chat.connections.append(time.monotonic())
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.flush()
            try:
                while not stopped.wait(1.0) and time.monotonic() < ends:
                    self.wfile.write(b" ")
                    self.wfile.flush()
            except OSError:
                return  # the client went away

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    chat = Stalling(f"http://127.0.0.1:{server.server_address[1]}/v1", stopped)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    stopper = threading.Timer(LIFETIME_S, server.shutdown)
    stopper.daemon = True
    stopper.start()
    try:
        yield chat
    finally:
        stopped.set()
        stopper.cancel()
        server.shutdown()
        server.server_close()
