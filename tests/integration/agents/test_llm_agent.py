"""The built-in agents against a local chat-completions server, through the real `openai` client:
tool calls that write the right body score 1.0, a wrong body less, a refused key or an endpoint
that cannot be reached is an infra_error row, and one completion is graded by the splicing rule."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from replicate.agents.llm_client import ChatClient, ModelConfig, ModelInfraError, ModelRefused
from replicate.agents.protocol import AgentConfig
from replicate.grading.grader import original_source
from replicate.sandbox import get_sandbox
from replicate.scoring.batch_run import RunOptions, RunSummary, run_batch
from replicate.scoring.results import RUN_FILE
from tests.integration.agents.fake_chat import (
    Answer,
    Script,
    error,
    serve,
    step,
    text,
    tool_results,
    tools,
)
from tests.integration.minted import CORE_PATH, Tiny

CLAMP = "tinypkg.core.clamp"
BODY = (
    "if value < low:\n        return low\n    if value > high:\n        return high\n"
    "    return value"
)
KEY = "sk-test-not-a-secret"
PROBE = "from tinypkg.core import clamp; print('got', clamp(12, 0, 10))"
SINGLE_REPLY = f"Here it is:\n\n```python\ndef clamp(value, low, high):\n    {BODY}\n```\n"


def run_with(
    tiny: Tiny, out: Path, url: str, agent: str = "builtin:openai", **model: Any
) -> RunSummary:
    config = AgentConfig(agent, get_sandbox("local"), timeout_s=90, allow_hosts=("127.0.0.1",))
    options = RunOptions(
        tasks=tiny.batch_dir,
        out=out,
        agent=config,
        sandbox_name="local",
        task_ids=(tiny.id_of(CLAMP),),
        model=ModelConfig(model="fake-model", api_key=KEY, base_url=url, **model),
    )
    return run_batch(options)


def transcript(tiny: Tiny, out: Path) -> dict[str, Any]:
    path = out / "transcripts" / tiny.id_of(CLAMP) / "0.json"
    found: dict[str, Any] = json.loads(path.read_text())
    return found


def right_script(request: dict[str, Any]) -> Answer:
    answers = [
        tools(("list_files", {"path": "."}), ("read_file", {"path": CORE_PATH})),
        tools(("edit_file", {"path": CORE_PATH, "old": "raise NotImplementedError", "new": BODY})),
        tools(("run_python", {"code": PROBE})),
        text("clamp is implemented"),
    ]
    return answers[min(step(request), len(answers) - 1)]


def test_tool_calls_that_write_the_right_body_score_one(tiny: Tiny, tmp_path: Path) -> None:
    with serve(right_script) as chat:
        summary = run_with(tiny, tmp_path / "run", chat.url)
    (row,) = summary.rows
    assert (row.reward, row.status, row.agent_status) == (1.0, "graded", "ok"), row.reason
    assert (row.prompt_tokens, row.completion_tokens) == (400, 80)
    assert chat.paths == ["/v1/chat/completions"] * 4
    assert all(h["authorization"] == f"Bearer {KEY}" for h in chat.headers)
    assert {t["function"]["name"] for t in chat.requests[0]["tools"]} >= {
        "list_files",
        "read_file",
        "write_file",
        "edit_file",
        "run_python",
        "run_tests",
    }
    listed, read, edited, ran = tool_results(chat.requests[-1])
    assert CORE_PATH in listed and "TASK.md" in listed and ".git/" not in listed
    assert "raise NotImplementedError" in read
    assert edited.startswith("wrote")
    assert ran.startswith("exit code 0") and "got 10" in ran  # ran in the sandbox, on the edit
    kept = transcript(tiny, tmp_path / "run")
    assert kept["steps"] == 4 and kept["prompt_tokens"] == 400
    assert [m["role"] for m in kept["messages"]][:3] == ["system", "user", "assistant"]
    assert kept["messages"][-1]["content"] == "clamp is implemented"
    for path in (tmp_path / "run").rglob("*"):
        assert not path.is_file() or KEY not in path.read_text(errors="replace"), path
    assert "model=fake-model" in json.loads((tmp_path / "run" / RUN_FILE).read_text())["agent"]


def test_a_wrong_body_scores_below_one(tiny: Tiny, tmp_path: Path) -> None:
    wrong = original_source(tiny.task(CLAMP)).decode().replace(BODY, "return value")
    assert wrong != original_source(tiny.task(CLAMP)).decode()

    def script(request: dict[str, Any]) -> Answer:
        if step(request) == 0:
            return tools(("write_file", {"path": CORE_PATH, "content": wrong}))
        return text("done")

    with serve(script) as chat:
        (row,) = run_with(tiny, tmp_path / "run", chat.url).rows
    assert row.status == "graded" and row.reward is not None and row.reward < 1.0
    assert len(chat.requests) == 2


def test_a_refused_key_is_an_infra_error_not_a_zero(tiny: Tiny, tmp_path: Path) -> None:
    script: Script = lambda request: error(401, "Incorrect API key provided")  # noqa: E731
    with serve(script) as chat:
        summary = run_with(tiny, tmp_path / "run", chat.url)
    (row,) = summary.rows
    assert (row.status, row.reward) == ("infra_error", None)
    assert "refused the key (401)" in row.reason
    assert len(chat.requests) == 1  # a 401 is not retried
    assert summary.infra_errors == 1
    assert "refused the key" in transcript(tiny, tmp_path / "run")["stop"]


def test_an_unreachable_endpoint_is_an_infra_error(tiny: Tiny, tmp_path: Path) -> None:
    (row,) = run_with(tiny, tmp_path / "run", "http://127.0.0.1:9/v1").rows
    assert (row.status, row.reward) == ("infra_error", None)
    assert "unreachable" in row.reason


def test_the_step_budget_ends_the_attempt_and_the_work_is_graded(
    tiny: Tiny, tmp_path: Path
) -> None:
    with serve(right_script) as chat:
        (row,) = run_with(tiny, tmp_path / "run", chat.url, max_steps=2).rows
    assert row.agent_status == "budget_exhausted" and len(chat.requests) == 2
    assert (row.status, row.reward) == ("graded", 1.0)  # the edit of the second step counts


def test_the_token_budget_ends_the_attempt(tiny: Tiny, tmp_path: Path) -> None:
    with serve(right_script) as chat:
        (row,) = run_with(tiny, tmp_path / "run", chat.url, max_tokens=200).rows
    assert row.agent_status == "budget_exhausted" and len(chat.requests) == 2  # 120, then 240
    assert (row.prompt_tokens, row.completion_tokens) == (200, 40)
    assert "token budget of 200 spent" in transcript(tiny, tmp_path / "run")["stop"]


def test_one_completion_is_graded_after_a_429_and_a_503(tiny: Tiny, tmp_path: Path) -> None:
    failures = [error(429, "slow down", {"Retry-After": "0"}), error(503, "overloaded")]
    lock = threading.Lock()

    def script(request: dict[str, Any]) -> Answer:
        with lock:
            return failures.pop(0) if failures else text(SINGLE_REPLY)

    with serve(script) as chat:
        (row,) = run_with(tiny, tmp_path / "run", chat.url, agent="builtin:openai-single").rows
    assert (row.reward, row.status, row.agent_status) == (1.0, "graded", "ok"), row.reason
    assert len(chat.requests) == 3  # the client retried the 429 and the 503
    request = chat.requests[-1]
    assert "tools" not in request
    assert "raise NotImplementedError" in request["messages"][-1]["content"]
    assert (row.prompt_tokens, row.completion_tokens) == (100, 20)
    candidate = tmp_path / "run" / "candidates" / tiny.id_of(CLAMP) / "0.py"
    assert candidate.read_text() == SINGLE_REPLY


@pytest.mark.parametrize(
    ("status", "kind", "words"),
    [
        (403, ModelInfraError, "refused the key (403)"),
        (404, ModelInfraError, "no such model or path (404)"),
        (400, ModelRefused, "rejected the request (400)"),
        (422, ModelRefused, "rejected the request (422)"),
    ],
)
def test_answers_that_are_not_retried_are_sorted_into_ours_and_the_agents(
    status: int, kind: type[Exception], words: str
) -> None:
    script: Script = lambda request: error(status, "no")  # noqa: E731
    with serve(script) as chat:
        client = ChatClient(ModelConfig(model="m", api_key=KEY, base_url=chat.url))
        with client, pytest.raises(kind, match=re.escape(words)):
            client.complete([{"role": "user", "content": "hi"}], None, 10)
    assert len(chat.requests) == 1
