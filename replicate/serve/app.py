"""The HTTP app of `replicate serve` (Starlette): reward for OpenRLHF, verdicts, health, metrics.

    POST /get_reward  {"query": [...], "prompts": [...], "labels": [...]}
                      -> {"rewards": [...], "scores": [...],
                          "extra_logs": {"infra_error": [...], "copy": [...], "copy_run": [...]}}
    POST /grade       {"task_id": ..., "candidate": ...} -> the verdict, as `replicate grade`
    GET  /health      {"status": "ok", ...}  (never needs the token)
    GET  /metrics     Prometheus text

A bad request gets a 4xx JSON `{"error": ...}` (a body not `application/json` 415, a Host not
this server's 421: see `serve/hosts.py`; no CORS header is ever sent); a full queue 503 with
Retry-After; a grade that failed for a reason not the candidate's is flagged (`infra_error`), its
reward withheld or 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from replicate import GRADER_VERSION
from replicate.core import Verdict, response_of_query
from replicate.errors import ReplicateError
from replicate.integrations import Grader, extra_logs, infra_verdict, reward_of
from replicate.serve import workers as worker
from replicate.serve.body import GradeBody, Problem, RewardBody, read_body
from replicate.serve.hosts import HostCheck
from replicate.serve.metrics import CONTENT_TYPE, Metrics
from replicate.serve.pool import BrokenProcessPool, Full, GradingPool

Handler = Callable[[Request], Awaitable[Response]]
RETRY_AFTER_S = 1
# a body past this is decoded in a grading process: a 10 MB body's `json.loads` is ~30 ms that
# hold the interpreter lock; below it, the copy there and back costs more than it spares
OFF_LOOP_BYTES = 256 * 1024
Body = TypeVar("Body", GradeBody, RewardBody)
LOOPBACK = HostCheck("127.0.0.1")


@dataclass(frozen=True)
class ServeSettings:
    workers: int = 2
    queue: int = 64
    max_body_bytes: int = 16 * 1024 * 1024
    token: str | None = None
    hosts: HostCheck = LOOPBACK  # the Host headers answered (else 421)


@dataclass(frozen=True)
class Service:
    grader: Grader
    settings: ServeSettings
    pool: GradingPool
    metrics: Metrics
    names: Mapping[str, str]  # every id and unique symbol, to its id (`Batch.names`)

    def task_id(self, name: str) -> str:
        """The id `name` names, by one dict lookup after a bound on its length: no work per
        task, and none that grows with the length of `name`, so a hostile id cannot hold the
        event loop."""
        found = None if len(name) > self.longest_name else self.names.get(name)
        if found is None:
            raise Problem(400, self._unknown(name))
        return found

    def _unknown(self, name: str) -> str:
        """Why `name` names no one task (`Batch.resolve`'s words, for a name as short as the
        longest the batch holds; past that, unknown without a look)."""
        if len(name) <= self.longest_name:
            try:
                self.grader.resolve(name)
            except ReplicateError as exc:
                return str(exc)
        shown = name if len(name) <= 200 else f"{name[:200]}..."
        return f"unknown task id {shown!r} ({len(self.grader.batch.ids)} tasks)"

    @functools.cached_property
    def longest_name(self) -> int:
        return max(map(len, self.names), default=0)

    def admit(self, n: int) -> None:
        if n > self.pool.capacity:
            raise Problem(413, f"{n} candidates in one request; at most {self.pool.capacity}")
        try:
            self.pool.admit(n)
        except Full as exc:
            self.metrics.rejected.inc()
            raise Problem(503, f"busy: {exc}") from None

    async def body(self, request: Request, kind: type[Body]) -> Body:
        """The fields of the request's body `kind` names; a large body decoded in a grading
        process, so its decoding does not hold the event loop."""
        data = await read_body(request, self.settings.max_body_bytes)
        if len(data) <= OFF_LOOP_BYTES:
            return kind.of(data, self.longest_name)
        try:
            return await self.pool.call(worker.decode, kind, data, self.longest_name)
        except BrokenProcessPool:
            raise Problem(503, "a grading process died and was restarted; try again") from None

    async def grade(self, task_id: str, candidate: str) -> Verdict:
        """One admitted grade, in a grading process."""
        try:
            verdict = await self.pool.run(worker.grade, task_id, candidate)
        except BrokenProcessPool:
            verdict = infra_verdict(task_id, "the grading process died; it was restarted")
        finally:
            self.pool.release(1)
        self.metrics.grades.inc()
        if verdict.status == "infra_error":
            self.metrics.infra_errors.inc()
        return verdict


async def _grade(service: Service, request: Request) -> Response:
    body = await service.body(request, GradeBody)
    task_id = service.task_id(body.task_id)
    service.admit(1)
    verdict = await service.grade(task_id, body.candidate)
    return JSONResponse(verdict.model_dump(mode="json"))


async def _get_reward(service: Service, request: Request) -> Response:
    body = await service.body(request, RewardBody)
    task_ids = [service.task_id(label) for label in body.labels]
    service.admit(len(task_ids))
    pairs = zip(body.queries, body.prompts, strict=True)
    candidates = [response_of_query(q, p) for q, p in pairs]
    verdicts = await asyncio.gather(
        *(service.grade(t, c) for t, c in zip(task_ids, candidates, strict=True))
    )
    rewards = [reward_of(v) for v in verdicts]
    values = [0.0 if r is None else r for r in rewards]
    logs = extra_logs(verdicts)
    return JSONResponse({"rewards": values, "scores": values, "extra_logs": logs})


async def _health(service: Service, request: Request) -> Response:
    return JSONResponse(
        {
            "status": "ok",
            "tasks": len(service.grader.batch.ids),
            "workers": service.pool.workers,
            "capacity": service.pool.capacity,
            "grader_version": GRADER_VERSION,
        }
    )


async def _metrics(service: Service, request: Request) -> Response:
    return Response(service.metrics.exposition(), media_type=CONTENT_TYPE)


def _authorised(request: Request, token: str | None) -> bool:
    if token is None:
        return True
    given = request.headers.get("authorization", "")
    return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())


def _endpoint(
    service: Service, path: str, work: Callable[[Service, Request], Awaitable[Response]]
) -> Handler:
    """`work` with the token check, JSON errors, and the request metrics around it."""
    open_path = path == "/health"

    async def handle(request: Request) -> Response:
        started = time.monotonic()
        try:
            if not service.settings.hosts.allows(request.headers.get("host")):
                raise Problem(421, "this server does not answer for that Host")
            if not open_path and not _authorised(request, service.settings.token):
                raise Problem(401, "missing or wrong bearer token")
            response = await work(service, request)
        except Problem as problem:
            response = problem.response(RETRY_AFTER_S)
        except Exception as exc:  # noqa: BLE001 - a bug of ours: a 500 JSON, the server lives on
            service.metrics.infra_errors.inc()
            response = JSONResponse({"error": f"internal error: {type(exc).__name__}"}, 500)
        service.metrics.requests.labels(path, str(response.status_code)).inc()
        service.metrics.latency.labels(path).observe(time.monotonic() - started)
        return response

    return handle


def create_app(grader: Grader, settings: ServeSettings) -> Starlette:
    """The app; the grader's environments are built on startup, its pools closed on shutdown."""
    metrics = Metrics()
    pool = GradingPool(settings.workers, settings.queue, metrics, grader.recipe)
    service = Service(grader, settings, pool, metrics, grader.batch.names())

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        for problem in await asyncio.to_thread(grader.prepare):
            print(f"warning: cannot grade {problem}", file=sys.stderr, flush=True)
        await service.pool.start()  # after the environments are built: each process reuses them
        try:
            yield
        finally:
            service.pool.close()
            grader.close()

    routes = [
        Route("/get_reward", _endpoint(service, "/get_reward", _get_reward), methods=["POST"]),
        Route("/grade", _endpoint(service, "/grade", _grade), methods=["POST"]),
        Route("/health", _endpoint(service, "/health", _health), methods=["GET"]),
        Route("/metrics", _endpoint(service, "/metrics", _metrics), methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)
