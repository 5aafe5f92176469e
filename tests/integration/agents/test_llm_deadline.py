"""The built-in agents against endpoints that stall, through the real `openai` client: one that
accepts and never answers, one that sends its headers and then a byte a second.  Each attempt
ends within --timeout + 10 s as an infra_error row and `replicate run` goes on to the next task;
with the deadline taken out, the same attempt overruns (the control)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from replicate.agents import llm_deadline
from replicate.agents.llm_client import ModelConfig
from replicate.agents.protocol import AgentConfig
from replicate.sandbox import get_sandbox
from replicate.scoring.batch_run import RunOptions, run_batch
from tests.integration.agents.fake_chat import Stalling, dripping, silent
from tests.integration.minted import REPO_ROOT, Tiny

# Each attempt waits out its whole --timeout, but the first attempt's includes the `openai` import
# and the client's start: 2 s on a quiet machine, over 12 s on a loaded one (12 s failed there).
TIMEOUT_S = 20
SLACK_S = 10
GRACE_S = 3.0  # the rate floor's grace here (RATE_GRACE_S, 10 s, waited out twice otherwise)
TASKS = ("tinypkg.core.clamp", "tinypkg.core.evens")
ENDPOINTS: dict[str, Callable[[], AbstractContextManager[Stalling]]] = {
    "silent": silent,
    "dripping": dripping,
}


@pytest.mark.parametrize("agent", ["builtin:openai-single", "builtin:openai"])
@pytest.mark.parametrize("endpoint", sorted(ENDPOINTS))
def test_a_stalling_endpoint_costs_one_timeout_per_attempt_and_the_run_goes_on(
    tiny: Tiny, tmp_path: Path, agent: str, endpoint: str
) -> None:
    out = tmp_path / "run"
    with ENDPOINTS[endpoint]() as chat:
        args = ["--tasks", str(tiny.batch_dir), "--out", str(out), "--agent", agent]
        args += ["--model", "fake", "--base-url", chat.url, "--allow-host", "127.0.0.1"]
        args += ["--timeout", str(TIMEOUT_S), "--workers", "1", "--json"]
        args += [arg for task in TASKS for arg in ("--task", task)]
        env = {**os.environ, "OPENAI_API_KEY": "sk-test", "PYTHONPATH": str(REPO_ROOT)}
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "replicate", "run", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=len(TASKS) * (TIMEOUT_S + SLACK_S) + 120,  # the test stops whatever happens
            check=False,
        )
        wall = time.monotonic() - started
    assert done.returncode == 3, done.stderr[-3000:]  # infra errors: written, then exit 3
    rows = json.loads(done.stdout)["rows"]
    assert len(rows) == len(TASKS) and len(chat.connections) >= len(TASKS)
    for row in rows:
        assert row["status"] == "infra_error" and row["reward"] is None, row
        assert "no answer within" in row["reason"], row["reason"]
        assert row["duration_s"] < TIMEOUT_S + SLACK_S, row
    assert wall < len(TASKS) * (TIMEOUT_S + SLACK_S) + 60, wall


@pytest.fixture
def no_deadline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The client as it was: no deadline around the request, the client's own HTTP client."""
    monkeypatch.setattr(llm_deadline, "within", lambda seconds, work, abandon: work())
    monkeypatch.setattr(llm_deadline, "http_client", lambda openai: None)
    yield


def _overruns(tiny: Tiny, out: Path, chat: Stalling) -> tuple[bool, Any]:
    """One attempt of `builtin:openai-single` in this process; whether it was still running at
    --timeout + 10 s (then the endpoint is stopped, so the attempt ends), and its row."""
    config = AgentConfig(
        "builtin:openai-single",
        get_sandbox("local"),
        timeout_s=TIMEOUT_S,
        allow_hosts=("127.0.0.1",),
    )
    options = RunOptions(
        tasks=tiny.batch_dir,
        out=out,
        agent=config,
        sandbox_name="local",
        task_ids=(tiny.id_of(TASKS[0]),),
        model=ModelConfig(model="fake-model", api_key="sk-test", base_url=chat.url),
    )
    finished = threading.Event()
    overran: list[bool] = []

    def check() -> None:
        overran.append(not finished.is_set())
        chat.stop()

    outer = threading.Timer(TIMEOUT_S + SLACK_S, check)
    outer.start()
    try:
        (row,) = run_batch(options).rows
    finally:
        finished.set()
        outer.cancel()
    return overran == [True], row


@pytest.mark.parametrize("endpoint", sorted(ENDPOINTS))
def test_control_without_the_deadline_the_attempt_overruns(
    tiny: Tiny, tmp_path: Path, endpoint: str, no_deadline: None
) -> None:
    with ENDPOINTS[endpoint]() as chat:
        overran, row = _overruns(tiny, tmp_path / "run", chat)
    assert overran, f"the attempt ended within the timeout without the deadline: {row}"


def test_a_body_under_the_rate_floor_is_given_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """The headers at once, then a byte a second: the read timeout never fires (every byte
    restarts it), so the client's plain HTTP client still reads at the grace's end (control);
    the floored one gives up as the grace ends."""
    import openai

    monkeypatch.setattr(llm_deadline, "RATE_GRACE_S", GRACE_S)
    ask = {"json": {"model": "m", "messages": []}, "timeout": 5.0}
    with dripping() as chat:
        plain = (getattr(openai, "DefaultHttpx2Client", None) or openai.DefaultHttpxClient)()
        with pytest.raises(llm_deadline.DeadlinePassed):
            llm_deadline.within(
                llm_deadline.RATE_GRACE_S + 5,
                lambda: plain.post(f"{chat.url}/chat/completions", **ask),
                abandon=plain.close,
            )
        floored = llm_deadline.http_client(openai)
        started = time.monotonic()
        with pytest.raises(Exception, match="bytes/s") as raised:
            floored.post(f"{chat.url}/chat/completions", **ask)
        assert "Timeout" in type(raised.value).__name__  # what the client retries
        assert time.monotonic() - started < llm_deadline.RATE_GRACE_S + 5
        floored.close()
