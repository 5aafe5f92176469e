"""Grading over HTTP against one `replicate grade` process per candidate, in the same run.

Both sides grade the same distinct candidates (the reference file plus a unique comment, so no
cache could answer), `--concurrency` at a time: the server (`replicate serve`, warm jails, its
environment built once) through POST /grade, and the CLI as a fresh process per candidate.
Printed: throughput (candidates/s), p50 and p99 latency of each, and server/CLI ratios.

    python bench/serve.py [--tasks DIR] [--task samplelib.text.slugify] [--candidates 20]
                          [--concurrency 2] [--cold] [--in-flight 200] [--queue 64]

With `--in-flight N`, a second measure: N distinct candidates sent at once to a server with
`--workers` grading and room for `--queue` more, each retried after the server's Retry-After
(as a trainer does); printed: how long until all were graded, the p50/p99 latency of the
answered tries and of whole requests (first try to reward), the 503s, and the server's memory.

With `--health`, a third: how long GET /health takes (asked every 20 ms by a process of its
own) with the server idle (the baseline); while as many other /health requests come at once
as `--in-flight` (200 unless given), five times (the server's own cost of so many requests);
while that many grades are in flight; while hostile requests arrive (`--hostile` of them, 2 at
a time, each a 10 MB task id); and while as many bodies of that size arrive that are refused
without a look at an id (what parsing the body alone costs). Printed: p50, p99 and the slowest
of each, the ratios to idle, and the CPU time of the server process and of its grading ones.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from replicate.batch import Batch  # noqa: E402
from replicate.grading import original_source  # noqa: E402
from tests.integration.integrations.load import quantile, rss_mb  # noqa: E402
from tests.integration.integrations.server import Server, health_during, serving  # noqa: E402


@dataclass(frozen=True)
class Figures:
    label: str
    wall_s: float
    latencies: list[float]

    @property
    def throughput(self) -> float:
        return len(self.latencies) / self.wall_s

    def quantile(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(label: str, texts: list[str], one: Callable[[str], float], workers: int) -> Figures:
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        latencies = list(pool.map(one, texts))
    return Figures(label, time.monotonic() - started, latencies)


def over_http(url: str, task_id: str) -> Callable[[str], float]:
    client = httpx.Client(timeout=300)

    def one(text: str) -> float:
        started = time.monotonic()
        answer = client.post(f"{url}/grade", json={"task_id": task_id, "candidate": text})
        elapsed = time.monotonic() - started
        if answer.status_code != 200 or answer.json()["reward"] != 1.0:
            sys.exit(f"server: {answer.status_code} {answer.text[:300]}")
        return elapsed

    return one


def by_process(tasks: Path, task_id: str, folder: Path) -> Callable[[str], float]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}

    def one(text: str) -> float:
        path = folder / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.py"
        path.write_text(text, encoding="utf-8")
        command = [sys.executable, "-m", "replicate", "grade", "--tasks", str(tasks)]
        started = time.monotonic()
        done = subprocess.run(
            [*command, "--task", task_id, "--candidate", str(path)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        elapsed = time.monotonic() - started
        if done.returncode != 0 or json.loads(done.stdout)["reward"] != 1.0:
            sys.exit(f"cli: {done.returncode} {done.stderr[-300:]}")
        return elapsed

    return one


@dataclass(frozen=True)
class Try:
    status: int
    latency_s: float
    reward: float | None


async def _post(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """One POST on a connection of its own (as OpenRLHF's `requests.post` does): status,
    headers and body. Raw asyncio streams, so the client's own CPU stays small beside the server
    on the same cores (an httpx client of 200 connections cost more than the grading it timed)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in header_lines if ": " in line)
    return int(status_line.split(" ", 2)[1]), headers, body


async def _until_graded(port: int, request: bytes, tries: list[Try]) -> float:
    """Send until an answer other than 503 comes, waiting Retry-After between; the whole time."""
    first = time.monotonic()
    while True:
        started = time.monotonic()
        status, headers, body = await _post(port, request)
        reward = json.loads(body).get("reward") if status == 200 else None
        tries.append(Try(status, time.monotonic() - started, reward))
        if status != 503:
            return time.monotonic() - first
        await asyncio.sleep(float(headers.get("retry-after", "1")))


def _requests(port: int, bodies: list[dict[str, str]]) -> list[bytes]:
    """Each body as a whole POST /grade, ready to send."""
    made = []
    for body in bodies:
        data = json.dumps(body).encode()
        head = (
            f"POST /grade HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
            "Connection: close\r\n\r\n"
        )
        made.append(head.encode() + data)
    return made


async def _storm(port: int, requests: list[bytes], tries: list[Try]) -> list[float]:
    return list(await asyncio.gather(*(_until_graded(port, r, tries) for r in requests)))


def in_flight(args: argparse.Namespace, task_id: str, reference: str) -> None:
    bodies = [
        {"task_id": task_id, "candidate": f"{reference}\n# in flight {n}\n"}
        for n in range(args.in_flight + 2)
    ]
    options = ["--workers", str(args.concurrency), "--queue", str(args.queue)]
    with serving(args.tasks, *options, *(["--cold"] if args.cold else [])) as server:
        port = int(server.url.rsplit(":", 1)[1])
        requests = _requests(port, bodies)
        asyncio.run(_storm(port, requests[:2], []))  # warm-up: environment and first jails
        tries: list[Try] = []
        started = time.monotonic()
        whole = asyncio.run(_storm(port, requests[2:], tries))
        wall = time.monotonic() - started
        memory = rss_mb(server.process.pid)
    answered = [t.latency_s for t in tries if t.status == 200]
    busy = [t.latency_s for t in tries if t.status == 503]
    right = sum(t.status == 200 and t.reward == 1.0 for t in tries)
    print(
        f"{args.in_flight} in flight (workers {args.concurrency}, queue {args.queue}): "
        f"all graded in {wall:.1f} s ({right}/{args.in_flight} right), "
        f"{len(busy)} tries answered 503"
    )
    for label, values in (("graded (200)", answered), ("turned away (503)", busy)):
        if values:
            print(
                f"  each {label:18} try: p50 {quantile(values, 0.5):.3f} s, "
                f"p99 {quantile(values, 0.99):.3f} s"
            )
    everything = [t.latency_s for t in tries]
    print(f"  every answered try:     p99 {quantile(everything, 0.99):.3f} s")
    print(
        f"  whole request (first try to reward): p50 {quantile(whole, 0.5):.3f} s, "
        f"p99 {quantile(whole, 0.99):.3f} s"
    )
    print(f"  server memory after: {memory:.0f} MiB")


HOSTILE_ID = "a<" * 5_000_000  # 10 MB, a slug replacement every second character


@dataclass(frozen=True)
class Probed:
    latencies: list[float]  # of GET /health, asked every 20 ms while the work ran
    cpu_s: float  # the server process's CPU time (all its threads) over the work
    workers_cpu_s: float  # its Python children's (the grading processes), over the work
    load: float  # the machine's 1-minute load average when the work ended


def _stat(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name (field 3 on)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _cpu_s(pid: int) -> float:
    """User and system CPU time of process `pid` (its threads included), from /proc."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _python_children(pid: int) -> dict[int, float]:
    """The CPU time of each Python process whose parent is `pid`."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or "python" not in (entry / "comm").read_text():
                continue
            if int(_stat(int(entry.name))[1]) == pid:
                found[int(entry.name)] = _cpu_s(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue  # ended while looked at
    return found


def _probed(server: Server, work: Callable[[], object]) -> Probed:
    pid = server.process.pid
    before, children = _cpu_s(pid), _python_children(pid)
    latencies = health_during(server.url, work)[1]
    spent = sum(t - children.get(p, 0.0) for p, t in _python_children(pid).items())
    return Probed(latencies, _cpu_s(pid) - before, spent, os.getloadavg()[0])


def _stack(pid: int) -> str:
    """The HTTP parser and event loop the server runs on (uvicorn's "auto": httptools and
    uvloop where they import), from the libraries its process has loaded."""
    maps = Path(f"/proc/{pid}/maps").read_text()
    return " + ".join(n for n in ("httptools", "uvloop") if n in maps) or "h11 + asyncio"


def health(args: argparse.Namespace, task_id: str, reference: str) -> None:
    count = args.in_flight or 200
    bodies = [
        {"task_id": task_id, "candidate": f"{reference}\n# health {n}\n"} for n in range(count + 2)
    ]
    options = ["--workers", str(args.concurrency), "--queue", str(args.queue)]
    with serving(args.tasks, *options, *(["--cold"] if args.cold else [])) as server:
        port = int(server.url.rsplit(":", 1)[1])
        requests = _requests(port, bodies)
        asyncio.run(_storm(port, requests[:2], []))  # warm-up: environment and first jails
        hostile = _requests(port, [{"task_id": HOSTILE_ID, "candidate": "x"}] * 2)
        padded = _requests(port, [{"task_id": 0, "pad": HOSTILE_ID}] * 2)  # type: ignore[dict-item]

        def sending(pair: list[bytes]) -> Callable[[], None]:
            def send() -> None:
                for _ in range(args.hostile // 2):
                    if len(asyncio.run(_storm(port, pair, []))) != 2:
                        sys.exit("requests went unanswered")

            return send

        asked = f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        healths = [asked.encode()] * count
        measured = {
            "idle (baseline)": _probed(server, lambda: time.sleep(3)),
            f"{count} /health at once, 5 times": _probed(
                server, lambda: [asyncio.run(_storm(port, healths, [])) for _ in range(5)]
            ),
            f"{count} grades in flight": _probed(
                server, lambda: asyncio.run(_storm(port, requests[2:], []))
            ),
            f"{args.hostile} 10 MB ids": _probed(server, sending(hostile)),
            f"{args.hostile} 10 MB bodies, no id": _probed(server, sending(padded)),
        }
        stack = _stack(server.process.pid)
    _print_health(measured, f"workers {args.concurrency}, {stack}, {os.cpu_count()} cores")


def _print_health(measured: dict[str, Probed], setting: str) -> None:
    idle = measured["idle (baseline)"].latencies
    print(f"GET /health every 20 ms ({setting}):")
    head = ("asked", "p50 ms", "p99 ms", "max ms", "p99/idle", "cpu s", "workers", "load")
    print(f"{'':28} {head[0]:>6} " + " ".join(f"{h:>8}" for h in head[1:]))
    for label, probed in measured.items():
        values = probed.latencies
        p50, p99 = quantile(values, 0.5) * 1000, quantile(values, 0.99) * 1000
        ratio = quantile(values, 0.99) / quantile(idle, 0.99)
        print(
            f"{label:28} {len(values):6} {p50:8.1f} {p99:8.1f} {max(values) * 1000:8.1f} "
            f"{ratio:7.1f}x {probed.cpu_s:8.2f} {probed.workers_cpu_s:8.2f} {probed.load:8.1f}"
        )
    worst = max(quantile(p.latencies, 0.99) for p in measured.values()) * 1000
    print(
        f"slowest p99 under load {worst:.0f} ms (goal: under 100 ms); "
        f"idle p99 {quantile(idle, 0.99) * 1000:.1f} ms; "
        "cpu s: the server process's CPU time over the work (its event loop's, and its "
        "threads'); workers: its grading processes'; load: the 1-minute load average after it"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=REPO_ROOT)
    parser.add_argument("--task", default="samplelib.text.slugify")
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--cold", action="store_true", help="the server without warm jails")
    parser.add_argument("--in-flight", type=int, default=0, help="also: N requests at once")
    parser.add_argument("--queue", type=int, default=64, help="the server's queue for --in-flight")
    parser.add_argument("--health", action="store_true", help="only: /health's latency under load")
    parser.add_argument("--hostile", type=int, default=20, help="10 MB ids sent for --health")
    args = parser.parse_args()
    task = Batch.open(args.tasks).load(args.task)
    reference = original_source(task).decode()
    if args.health:
        health(args, task.id, reference)
        return
    texts = [f"{reference}\n# bench candidate {n}\n" for n in range(2 * args.candidates)]
    http_texts, cli_texts = texts[: args.candidates], texts[args.candidates :]
    workers = str(args.concurrency)
    options = ["--workers", workers, "--queue", str(4 * args.candidates)]
    with serving(args.tasks, *options, *(["--cold"] if args.cold else [])) as server:
        over_http(server.url, task.id)(f"{reference}\n# warm-up\n")
        served = measure("serve", http_texts, over_http(server.url, task.id), args.concurrency)
    with tempfile.TemporaryDirectory(prefix="replicate-bench-") as folder:
        one = by_process(args.tasks, task.id, Path(folder))
        cli = measure("grade (process each)", cli_texts, one, args.concurrency)
    print(f"task {task.id}: {args.candidates} distinct candidates each, concurrency {workers}")
    print(f"{'':22} {'cand/s':>8} {'p50 s':>8} {'p99 s':>8}")
    for f in (served, cli):
        print(f"{f.label:22} {f.throughput:8.2f} {f.quantile(0.5):8.3f} {f.quantile(0.99):8.3f}")
    print(
        f"serve / process: throughput x{served.throughput / cli.throughput:.2f}, "
        f"p50 x{served.quantile(0.5) / cli.quantile(0.5):.2f}, "
        f"p99 x{served.quantile(0.99) / cli.quantile(0.99):.2f}"
    )
    if args.in_flight:
        in_flight(args, task.id, reference)


if __name__ == "__main__":
    main()
