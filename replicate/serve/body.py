"""Reading a request body: bounded in size, JSON, with the fields a route needs (else 4xx)."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse


class Problem(Exception):
    """A request the server answers with an error status and a one-line JSON message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    def response(self, retry_after_s: int) -> JSONResponse:
        headers = {"Retry-After": str(retry_after_s)} if self.status == 503 else None
        return JSONResponse({"error": self.message}, self.status, headers=headers)


def check_json_type(request: Request) -> None:
    """415 unless the body is declared `application/json`: a web page may post a form or
    `text/plain` to any address without asking, but JSON only after a CORS preflight, which
    this server never grants."""
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        raise Problem(415, f"send the body as application/json, not {media[:100] or 'untyped'}")


async def read_json(request: Request, limit: int) -> dict[str, Any]:
    """The body as a JSON object; 415 unless sent as JSON, 413 past `limit` bytes (read no
    further), 400 if not JSON."""
    check_json_type(request)
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise Problem(413 if declared.isdigit() else 400, f"body larger than {limit} bytes")
    data = bytearray()  # grown chunk by chunk: no one copy of the whole body at the end
    async for chunk in request.stream():
        if len(data) + len(chunk) > limit:
            raise Problem(413, f"body larger than {limit} bytes")
        data += chunk
    try:
        body = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise Problem(400, "body is not JSON") from None
    except RecursionError:
        raise Problem(400, "body is JSON nested too deeply") from None
    if not isinstance(body, dict):
        raise Problem(400, "body must be a JSON object")
    return body


def string_field(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str):
        raise Problem(400, f"field {name!r} must be a string")
    return value


def string_list(body: dict[str, Any], name: str) -> list[str]:
    value = body.get(name)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise Problem(400, f"field {name!r} must be a list of strings")
    return value
