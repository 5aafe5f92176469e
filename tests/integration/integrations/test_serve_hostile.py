"""`replicate serve` against hostile clients: a huge task id does not hold the event loop, and a
web page the operator opens can neither post candidates (only JSON is graded) nor read answers
under DNS rebinding (a foreign Host gets 421; no CORS header).  Each defence is shown failing
first with the defence taken out (monkeypatched off in the in-process server).

The server runs in this process (uvicorn on a thread) so a defence can be monkeypatched off."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from starlette.middleware.cors import CORSMiddleware

from replicate.cli.serve import check_exposure
from replicate.core import MAX_PART, slug
from replicate.integrations import Grader
from replicate.serve import HostCheck, ServeSettings, create_app
from replicate.serve import app as serve_app
from replicate.serve import body as serve_body
from replicate.serve.body import Problem
from tests.integration.integrations.rows import candidates
from tests.integration.integrations.server import REPO_ROOT, health_during, serving_in_process
from tests.integration.minted import Tiny

CLAMP = "tinypkg.core.clamp"
HOSTILE_ID = "a<" * 7_500_000  # 15 MB, and slow to slug: a replacement every second character
AT_ONCE = 3
HEALTH_BOUND_S = 2.0  # generous: the defended server answers in milliseconds
EVIL_ORIGIN = "http://evil.example"


@pytest.fixture(scope="module")
def url(tiny: Tiny) -> Iterator[str]:
    settings = ServeSettings(workers=1, queue=4, max_body_bytes=16 * 1024 * 1024)
    with serving_in_process(create_app(Grader(tiny.batch_dir), settings)) as found:
        yield found


@pytest.fixture(scope="module")
def right(tiny: Tiny) -> str:
    return candidates(tiny.task(CLAMP))["bare_def"]


def _slowest_health_while(url: str, work: Callable[[], httpx.Response]) -> tuple[int, float]:
    """`work`'s status and the slowest /health answer among those asked while it ran."""
    answer, latencies = health_during(url, work, every_s=0.05)
    return answer.status_code, max(latencies)


def _hostile(url: str) -> httpx.Response:
    body = {"task_id": HOSTILE_ID, "candidate": "x"}
    return httpx.post(f"{url}/grade", json=body, timeout=300)


def _hostile_at_once(url: str) -> httpx.Response:
    """`AT_ONCE` hostile requests together; the last answer (all must be the same)."""
    with ThreadPoolExecutor(AT_ONCE) as pool:
        answers = list(pool.map(lambda _: _hostile(url), range(AT_ONCE)))
    assert len({a.status_code for a in answers}) == 1
    return answers[-1]


def _pre_fix_task_id(self: serve_app.Service, name: str) -> str:
    """The lookup before the bound: the batch scanned on the event loop, the name slugged once
    per task."""
    ids = self.grader.batch.ids
    if name in ids:
        return name
    found = [i for i in ids if f"__{slug(name)[:MAX_PART]}__" in i]
    if len(found) == 1:
        return found[0]
    raise Problem(400, "unknown task id")


def test_health_answers_while_a_huge_task_id_is_refused(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The id is bounded twice: the body's decoding keeps only a prefix of an id longer than
    any in the batch, and the lookup refuses one that long without slugging it. The control
    takes both out, and decodes on the event loop, as before either."""
    monkeypatch.setattr(serve_app.Service, "task_id", _pre_fix_task_id)
    monkeypatch.setattr(serve_body, "cut", lambda name, bound: name)
    monkeypatch.setattr(serve_app, "OFF_LOOP_BYTES", 1 << 40)  # a worker sees no monkeypatch
    status, slowest = _slowest_health_while(url, lambda: _hostile_at_once(url))
    assert status == 400
    assert slowest > HEALTH_BOUND_S, f"control: /health should have waited, took {slowest:.2f} s"
    monkeypatch.undo()
    started = time.monotonic()
    status, slowest = _slowest_health_while(url, lambda: _hostile_at_once(url))
    assert status == 400 and time.monotonic() - started < 30
    assert slowest < HEALTH_BOUND_S, f"/health took {slowest:.2f} s beside a hostile id"
    answer = _hostile(url)
    assert len(answer.text) < 1000 and "unknown task id" in answer.json()["error"]


def test_health_answers_while_a_prompt_is_looked_for_in_a_hostile_query(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prompt's tail is looked for in the query from the front (`response_of_query`): the
    search from its end that `serve` made before, `str.rfind`, is quadratic on such a pair (600
    KB here); the control puts it back."""
    # ~6 s for `rfind` on a quiet machine (1.5 s at half the size: too close to the bound)
    half = "a" * 100_000
    body = {"query": ["a" * 400_000], "prompts": [f"{half}b{half}"], "labels": [CLAMP]}

    def reward() -> httpx.Response:
        return httpx.post(f"{url}/get_reward", json=body, timeout=300)

    monkeypatch.setattr(serve_app, "response_of_query", _searched_from_the_end)
    status, slowest = _slowest_health_while(url, reward)
    assert status == 200
    assert slowest > HEALTH_BOUND_S, f"control: /health should have waited, took {slowest:.2f} s"
    monkeypatch.undo()
    status, slowest = _slowest_health_while(url, reward)
    assert status == 200
    assert slowest < HEALTH_BOUND_S, f"/health took {slowest:.2f} s beside a hostile query"


def test_only_json_bodies_are_graded(
    url: str, tiny: Tiny, right: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page may post `text/plain` or a form to loopback without a preflight: refused 415."""
    data = httpx.Request("POST", url, json={"task_id": CLAMP, "candidate": right}).content
    as_page = {"Content-Type": "text/plain;charset=UTF-8", "Origin": EVIL_ORIGIN}
    monkeypatch.setattr(serve_body, "check_json_type", lambda request: None)
    control = httpx.post(f"{url}/grade", content=data, headers=as_page, timeout=120)
    assert (control.status_code, control.json().get("reward")) == (200, 1.0)  # the attack works
    monkeypatch.undo()
    for kind in ("text/plain;charset=UTF-8", "application/x-www-form-urlencoded", None):
        headers = {"Content-Type": kind} if kind else {}
        answer = httpx.post(f"{url}/grade", content=data, headers=headers, timeout=120)
        assert answer.status_code == 415, kind
        assert "application/json" in answer.json()["error"]
    typed = {"Content-Type": "application/json; charset=utf-8"}
    answer = httpx.post(f"{url}/grade", content=data, headers=typed, timeout=120)
    assert (answer.status_code, answer.json()["reward"]) == (200, 1.0)


def test_a_foreign_host_is_refused(url: str, right: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """DNS rebinding: the page's own name now points at 127.0.0.1, and its requests say so."""
    port = url.rsplit(":", 1)[1]
    body = {"task_id": CLAMP, "candidate": right}
    rebound = {"Host": f"evil.example:{port}"}
    monkeypatch.setattr(HostCheck, "allows", lambda self, header: True)
    control = httpx.post(f"{url}/grade", json=body, headers=rebound, timeout=120)
    assert control.status_code == 200 and control.json()["reward"] == 1.0  # verdict read
    monkeypatch.undo()
    for path in ("/grade", "/health"):
        method = "POST" if path == "/grade" else "GET"
        answer = httpx.request(method, f"{url}{path}", json=body, headers=rebound, timeout=120)
        assert answer.status_code == 421, path
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "LOCALHOST"):
        assert httpx.get(f"{url}/health", headers={"Host": host}).status_code == 200, host


def _cors_headers(response: httpx.Response) -> list[str]:
    return [name for name in response.headers if name.lower().startswith("access-control-")]


def _cross_origin_probes(url: str) -> list[httpx.Response]:
    preflight = {
        "Origin": EVIL_ORIGIN,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
    }
    return [
        httpx.options(f"{url}/grade", headers=preflight),
        httpx.get(f"{url}/health", headers={"Origin": EVIL_ORIGIN}),
        httpx.post(f"{url}/grade", json={"task_id": "nope"}, headers={"Origin": EVIL_ORIGIN}),
    ]


def test_no_cors_headers(url: str, tiny: Tiny) -> None:
    """No preflight is granted and no answer may be read by another origin."""
    permissive = CORSMiddleware(
        create_app(Grader(tiny.batch_dir), ServeSettings(workers=1)), allow_origins=["*"]
    )
    with serving_in_process(permissive) as control:
        assert all(_cors_headers(r) for r in _cross_origin_probes(control))  # detector works
    probes = _cross_origin_probes(url)
    assert [_cors_headers(r) for r in probes] == [[], [], []]
    assert probes[0].status_code >= 400


def test_refuses_to_listen_beyond_loopback_without_a_token(tiny: Tiny) -> None:
    command = [sys.executable, "-m", "replicate", "serve", "--tasks", str(tiny.batch_dir)]
    env: dict[str, Any] = {"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [*command, "--host", "0.0.0.0", "--port", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "without a token" in done.stderr
    check_exposure("0.0.0.0", "a-token")  # control: with a token it may
    check_exposure("localhost", None)
    check_exposure("::1", None)


def _searched_from_the_end(query: str, prompt: str) -> str:
    """How `serve` found the response before: after the prompt's last occurrence (`rfind`)."""
    if prompt and query.startswith(prompt):
        return query[len(prompt) :]
    at = query.rfind(prompt) if prompt else -1
    return query[at + len(prompt) :] if at >= 0 else query
