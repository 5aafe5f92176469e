"""`replicate serve` as a trainer meets it: over HTTP, in its own process, on loopback."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from replicate.grading.grader import grade_text
from replicate.jail import Jail
from replicate.jail.calls import RepoContext
from replicate.sandbox.base import Sandbox
from tests.integration.integrations.load import rss_mb, storm
from tests.integration.integrations.rows import candidates
from tests.integration.integrations.server import Server, serving
from tests.integration.minted import Tiny

TOKEN = "t0ken"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON_AUTH = {**AUTH, "Content-Type": "application/json"}
CLAMP = "tinypkg.core.clamp"
WRONG = "```python\ndef clamp(value, low, high):\n    return min(value, high)\n```"
MALFORMED = "def clamp(value, low:\n"


@pytest.fixture(scope="module")
def server(tiny: Tiny) -> Iterator[Server]:
    with serving(tiny.batch_dir, "--token", TOKEN, "--workers", "2", "--queue", "6") as found:
        yield found


def _post(server: Server, path: str, body: Any, **kw: Any) -> httpx.Response:
    headers = {**AUTH, **kw.pop("headers", {})}
    return httpx.post(f"{server.url}{path}", json=body, headers=headers, timeout=120, **kw)


def test_bad_requests_get_a_4xx_json_error(server: Server, tiny: Tiny) -> None:
    url = server.url
    cases = [
        httpx.post(f"{url}/grade", content=b"{not json", headers=JSON_AUTH),
        httpx.post(f"{url}/grade", content=b"[1, 2]", headers=JSON_AUTH),
        _post(server, "/grade", {"task_id": CLAMP}),
        _post(server, "/grade", {"task_id": 3, "candidate": "x"}),
        _post(server, "/grade", {"task_id": "no-such-task", "candidate": "x"}),
        _post(server, "/get_reward", {"query": ["a"], "prompts": ["a"]}),
        _post(server, "/get_reward", {"query": ["a"], "prompts": [], "labels": [CLAMP]}),
        _post(server, "/get_reward", {"query": ["a"], "prompts": ["a"], "labels": ["nope"]}),
        httpx.post(f"{url}/grade", content=b"x" * (17 * 1024 * 1024), headers=JSON_AUTH),
        # nested past the decoder's recursion limit (was a 500)
        httpx.post(f"{url}/grade", content=b"[" * 100_000 + b"]" * 100_000, headers=JSON_AUTH),
        _post(server, "/grade", {"task_id": "x" * 1_000_000, "candidate": "x"}),
    ]
    assert [r.status_code for r in cases] == [400] * 8 + [413, 400, 400]
    assert all(isinstance(r.json()["error"], str) for r in cases)
    assert len(cases[-1].text) < 1000  # a huge unknown id is not echoed back whole
    assert httpx.get(f"{url}/grade", headers=AUTH).status_code == 405
    assert httpx.get(f"{url}/health").json()["status"] == "ok"  # still serving


def test_it_runs_on_the_pinned_parser_and_loop(server: Server) -> None:
    """uvicorn picks httptools and uvloop where they import (pyproject.toml pins them): half the
    server's CPU per request of h11 on asyncio (`python bench/serve.py --health`), which keeps
    /health answering beside bursts of grades.  Read from the libraries its process loaded."""
    maps = Path(f"/proc/{server.process.pid}/maps").read_text()
    assert "httptools" in maps and "uvloop" in maps


def test_token_is_required_except_for_health(server: Server) -> None:
    body = {"task_id": CLAMP, "candidate": "x"}
    assert httpx.post(f"{server.url}/grade", json=body).status_code == 401
    wrong = {"Authorization": "Bearer nope"}
    assert httpx.post(f"{server.url}/grade", json=body, headers=wrong).status_code == 401
    assert httpx.get(f"{server.url}/metrics").status_code == 401
    assert httpx.get(f"{server.url}/health").status_code == 200


def test_rewards_equal_grade_text(
    server: Server, tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    task = tiny.task(CLAMP)
    texts = [*candidates(task).values(), WRONG, MALFORMED]
    direct = [grade_text(task, text, Jail(tiny_ctx, local_sandbox)) for text in texts]
    verdicts = [_post(server, "/grade", {"task_id": task.id, "candidate": t}) for t in texts]
    assert all(r.status_code == 200 for r in verdicts)
    assert [r.json()["reward"] for r in verdicts] == [v.reward for v in direct]
    assert [r.json()["status"] for r in verdicts] == ["graded"] * len(texts)
    assert [v.reward for v in direct][:4] == [1.0, 1.0, 1.0, 0.0]
    prompts = [f"prompt {i}\n" for i in range(len(texts))]
    reward = _post(
        server,
        "/get_reward",
        {
            "query": [p + t for p, t in zip(prompts, texts, strict=True)],
            "prompts": prompts,
            "labels": [CLAMP] * len(texts),
        },
    )
    assert reward.status_code == 200
    got = reward.json()
    assert got["rewards"] == [v.reward for v in direct] == got["scores"]
    assert got["extra_logs"]["infra_error"] == [0.0] * len(texts)
    # the memorisation signal, as `/grade` and `grade_text` give it (the original's copies: 1.0)
    assert [r.json()["copy"] for r in verdicts] == [v.copy_share for v in direct]
    assert got["extra_logs"]["copy"] == [v.copy_share or 0.0 for v in direct]
    assert got["extra_logs"]["copy_run"] == [float(v.copy_run or 0) for v in direct]
    assert got["extra_logs"]["copy"][:4] == [1.0, 1.0, 1.0, 0.0]


IN_FLIGHT = 200


def _mixed(task_id: str, kinds: dict[str, str], rounds: int) -> list[tuple[str, dict[str, str]]]:
    """`IN_FLIGHT` distinct candidates (a unique comment each), the kinds taken in turn."""
    names = sorted(kinds)
    picked = [names[n % len(names)] for n in range(IN_FLIGHT)]
    return [
        (kind, {"task_id": task_id, "candidate": f"{kinds[kind]}\n# {rounds}-{n}\n"})
        for n, kind in enumerate(picked)
    ]


def test_two_hundred_in_flight_all_graded_right_once_and_memory_flat(
    server: Server, tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    """200 distinct candidates at once (right, partly right, wrong, malformed) against a server
    with room for 8 (2 running, 6 queued): the overflow is turned away at once with 503 and
    Retry-After, the client retries as a trainer does, and every request ends graded exactly
    once with the reward `grade_text` gives it; the server's memory after a second storm is
    where the first left it (a leak of half a MiB per request fails this)."""
    task = tiny.task(CLAMP)
    right = candidates(task)
    kinds = {"right": right["bare_def"], "fenced": right["fenced_def"], "stub": right["stub"]}
    kinds |= {"partly": WRONG, "malformed": MALFORMED}
    direct = {
        k: grade_text(task, t, Jail(tiny_ctx, local_sandbox)).reward for k, t in kinds.items()
    }
    assert [direct[k] for k in ("right", "fenced", "stub", "malformed")] == [1.0, 1.0, 0.0, 0.0]
    assert 0.0 < (direct["partly"] or 0.0) < 1.0
    memory = []
    for rounds in (1, 2):
        before = _grades_total(server)
        sent = _mixed(task.id, kinds, rounds)
        answers = storm(server.url, [body for _, body in sent], AUTH)
        assert [a.status for a in answers] == [200] * IN_FLIGHT
        assert [a.reward for a in answers] == [direct[kind] for kind, _ in sent]
        assert all(a.retry_after_ok for a in answers)
        assert sum(a.tries > 1 for a in answers) >= IN_FLIGHT // 2  # most waited their turn
        assert _grades_total(server) - before == IN_FLIGHT  # none lost, none graded twice
        memory.append(rss_mb(server.process.pid))
    assert memory[1] <= memory[0] * 1.1 + 10, memory  # flat: no growth per request served
    metrics = httpx.get(f"{server.url}/metrics", headers=AUTH).text
    assert 'replicate_requests_total{path="/grade",status="503"}' in metrics
    assert "replicate_queue_depth 0.0" in metrics and "replicate_infra_errors_total 0.0" in metrics


def _grades_total(server: Server) -> float:
    text = httpx.get(f"{server.url}/metrics", headers=AUTH).text
    line = next(x for x in text.splitlines() if x.startswith("replicate_grades_total "))
    return float(line.split()[1])


def test_an_infrastructure_failure_is_reported_apart_from_a_zero(
    tiny: Tiny, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A task whose hidden files were edited after minting cannot be graded: not the candidate's
    fault, so /grade withholds the reward and /get_reward flags it, while other tasks grade."""
    batch = tiny.copy_batch(tmp_path_factory.mktemp("tampered") / "batch")
    task = tiny.task(CLAMP)
    with (batch / "reference_impls" / task.id / "expected.jsonl").open("a") as handle:
        handle.write("\n")
    right = candidates(task)["bare_def"]
    with serving(batch, "--workers", "1") as server:
        verdict = httpx.post(
            f"{server.url}/grade", json={"task_id": CLAMP, "candidate": right}, timeout=120
        )
        assert verdict.status_code == 200
        assert verdict.json()["status"] == "infra_error" and verdict.json()["reward"] is None
        evens = candidates(tiny.task("tinypkg.core.evens"))["whole_file"]
        body = {
            "query": [right, evens],
            "prompts": ["", ""],
            "labels": [CLAMP, "tinypkg.core.evens"],
        }
        got = httpx.post(f"{server.url}/get_reward", json=body, timeout=120).json()
        assert got["rewards"] == [0.0, 1.0]
        assert got["extra_logs"]["infra_error"] == [1.0, 0.0]
        metrics = httpx.get(f"{server.url}/metrics").text
        assert "replicate_infra_errors_total 2.0" in metrics


def _grading_processes(server: Server) -> list[int]:
    """The pids of the server's grading processes (spawned children running `spawn_main`)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or b"spawn_main" not in (entry / "cmdline").read_bytes():
                continue
            if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == server.process.pid:
                found.append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue  # ended while looked at
    return found


def test_a_grading_process_that_dies_is_an_infra_error_and_is_replaced(tiny: Tiny) -> None:
    """A grading process killed (out of memory, say) fails the grade in hand as an
    infrastructure error, not a zero nor a 500, and the server starts new processes: the grade
    after it is graded."""
    right = {"task_id": CLAMP, "candidate": candidates(tiny.task(CLAMP))["bare_def"]}
    with serving(tiny.batch_dir, "--workers", "1") as server:
        [worker] = _grading_processes(server)
        os.kill(worker, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while worker in _grading_processes(server) and time.monotonic() < deadline:
            time.sleep(0.1)  # reaped by the pool, which then knows it broke
        first = httpx.post(f"{server.url}/grade", json=right, timeout=120)
        assert first.status_code == 200
        assert (first.json()["status"], first.json()["reward"]) == ("infra_error", None)
        again = httpx.post(f"{server.url}/grade", json=right, timeout=120)
        assert (again.status_code, again.json()["reward"]) == (200, 1.0)
        assert len(_grading_processes(server)) == 1 and worker not in _grading_processes(server)
