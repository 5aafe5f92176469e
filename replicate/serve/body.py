"""Reading a request body: bounded in size, JSON, with the fields a route needs (else 4xx)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse


class Problem(Exception):
    """A request the server answers with an error status and a one-line JSON message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    def __reduce__(self) -> tuple[type[Problem], tuple[int, str]]:
        return Problem, (self.status, self.message)  # raised in a worker process, re-raised here

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


async def read_body(request: Request, limit: int) -> bytearray:
    """The body's bytes; 415 unless sent as JSON, 413 past `limit` bytes (read no further)."""
    check_json_type(request)
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise Problem(413 if declared.isdigit() else 400, f"body larger than {limit} bytes")
    data = bytearray()  # grown chunk by chunk: no one copy of the whole body at the end
    async for chunk in request.stream():
        if len(data) + len(chunk) > limit:
            raise Problem(413, f"body larger than {limit} bytes")
        data += chunk
    return data


def json_object(data: bytes | bytearray) -> dict[str, Any]:
    """`data` as a JSON object, else 400."""
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


def cut(name: str, bound: int) -> str:
    """`name`, or for one longer than `bound` (no task's name) a prefix still longer than
    `bound` and than the 200 characters an error shows: what a 10 MB id is known by, in less."""
    return name[: max(bound, 200) + 1]


@dataclass(frozen=True)
class GradeBody:
    """POST /grade's body: a task id (cut past `bound`) and a candidate."""

    task_id: str
    candidate: str

    @classmethod
    def of(cls, data: bytes | bytearray, bound: int) -> GradeBody:
        body = json_object(data)
        return cls(cut(string_field(body, "task_id"), bound), string_field(body, "candidate"))


@dataclass(frozen=True)
class RewardBody:
    """POST /get_reward's body: OpenRLHF's lists, of one length (labels cut past `bound`)."""

    queries: list[str]
    prompts: list[str]
    labels: list[str]

    @classmethod
    def of(cls, data: bytes | bytearray, bound: int) -> RewardBody:
        body = json_object(data)
        queries = string_list(body, "query")
        prompts = string_list(body, "prompts")
        labels = [cut(label, bound) for label in string_list(body, "labels")]
        if not len(queries) == len(prompts) == len(labels):
            raise Problem(400, "query, prompts and labels must have the same length")
        return cls(queries, prompts, labels)
