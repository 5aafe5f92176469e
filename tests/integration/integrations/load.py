"""Many requests at once against `replicate serve`, as a trainer sends them: each retried after
the server's Retry-After while it answers 503, until it is graded or gives up."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

MAX_TRIES = 200


@dataclass(frozen=True)
class Answer:
    index: int
    status: int  # the last answer's HTTP status
    reward: float | None
    tries: int
    latency_s: float  # of the last (answered) try
    total_s: float  # from the first try to the last answer
    retry_after_ok: bool  # every 503 carried a Retry-After


async def _one(
    client: httpx.AsyncClient, url: str, index: int, body: dict[str, Any], *, retry: bool
) -> Answer:
    first = time.monotonic()
    tries, retry_after_ok = 0, True
    while True:
        tries += 1
        started = time.monotonic()
        answer = await client.post(f"{url}/grade", json=body)
        latency = time.monotonic() - started
        if answer.status_code != 503 or not retry or tries >= MAX_TRIES:
            break
        after = answer.headers.get("retry-after")
        retry_after_ok = retry_after_ok and bool(after)
        await asyncio.sleep(float(after or 1))
    payload = answer.json() if answer.status_code == 200 else {}
    return Answer(
        index,
        answer.status_code,
        payload.get("reward"),
        tries,
        latency,
        time.monotonic() - first,
        retry_after_ok,
    )


async def _storm(
    url: str, bodies: list[dict[str, Any]], headers: dict[str, str], retry: bool
) -> list[Answer]:
    limits = httpx.Limits(max_connections=len(bodies) + 1)
    async with httpx.AsyncClient(headers=headers, timeout=300, limits=limits) as client:
        work = (_one(client, url, n, body, retry=retry) for n, body in enumerate(bodies))
        return list(await asyncio.gather(*work))


def storm(
    url: str, bodies: list[dict[str, Any]], headers: dict[str, str], *, retry: bool = True
) -> list[Answer]:
    """Send every body to POST /grade at once; the answers in the bodies' order."""
    return asyncio.run(_storm(url, bodies, headers, retry))


def rss_mb(pid: int) -> float:
    """The resident memory of a process, in MiB (from /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]
