"""A local chat-completions server for the built-in agent's tests: the real `openai` client talks
HTTP to it on 127.0.0.1, and a script decides each answer from the request it got."""

from __future__ import annotations

import json
import threading
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
