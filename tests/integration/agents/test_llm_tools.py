"""The built-in agent's tools: file tools confined to the workspace (no path or symlink leads
out), run tools in the agent's sandbox (no network, a time limit), and the endpoint rule."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from replicate.agents.llm_client import ModelConfig, endpoint_problem
from replicate.agents.llm_tools import Toolbox
from replicate.agents.protocol import AgentConfig
from replicate.agents.registry import make_agent
from replicate.agents.workspace import make_workspace
from replicate.errors import ReplicateError
from replicate.jail.calls import RepoContext
from replicate.sandbox.base import Sandbox
from tests.integration.minted import CORE_PATH, Tiny

CLAMP = "tinypkg.core.clamp"


@pytest.fixture
def box(tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox, tmp_path: Path) -> Toolbox:
    task = tiny.task(CLAMP)
    workspace = make_workspace(task, tmp_path / "ws")
    config = AgentConfig("builtin:openai", local_sandbox, allow_hosts=("127.0.0.1",))
    return Toolbox(task, workspace, tiny_ctx, config)


def call(box: Toolbox, name: str, timeout_s: float = 30, **args: str) -> str:
    return box.call(name, json.dumps(args), timeout_s)


def test_file_tools_stay_in_the_workspace(box: Toolbox, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("hidden")
    os.symlink(outside, box.workspace / "linkdir")
    os.symlink(outside / "secret.txt", box.workspace / "link.txt")
    for name, args in [
        ("read_file", {"path": "../outside/secret.txt"}),
        ("read_file", {"path": str(outside / "secret.txt")}),
        ("read_file", {"path": "linkdir/secret.txt"}),
        ("read_file", {"path": "link.txt"}),
        ("write_file", {"path": "linkdir/planted.txt", "content": "x"}),
        ("edit_file", {"path": "link.txt", "old": "hidden", "new": "gone"}),
        ("list_files", {"path": "linkdir"}),
    ]:
        answer = call(box, name, **args)
        assert answer.startswith("error:"), (name, args, answer)
        assert "hidden" not in answer
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "hidden"


def test_file_tools_work_inside(box: Toolbox) -> None:
    assert call(box, "write_file", path="notes/a.txt", content="one two two").startswith("wrote")
    assert "occurs 2 times" in call(box, "edit_file", path="notes/a.txt", old="two", new="3")
    assert call(box, "edit_file", path="notes/a.txt", old="one", new="1").startswith("wrote")
    assert call(box, "read_file", path="notes/a.txt") == "1 two two"
    assert "notes/a.txt" in call(box, "list_files", path=".")
    assert call(box, "list_files", path="notes") == "a.txt"
    assert "raise NotImplementedError" in call(box, "read_file", path=CORE_PATH)


def test_bad_calls_are_answered_not_raised(box: Toolbox) -> None:
    assert box.call("read_file", "{not json", 5).startswith("error:")
    assert box.call("read_file", '{"path": 3}', 5).startswith("error:")
    assert box.call("read_file", '{"nope": "x"}', 5).startswith("error: bad arguments")
    assert box.call("rm_rf", "{}", 5) == "error: no tool named 'rm_rf'"
    assert call(box, "run_tests", args="'unbalanced").startswith("error: bad arguments")


def test_run_tools_have_no_network_and_a_time_limit(box: Toolbox) -> None:
    probe = "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 80), timeout=3)\n"
    probe += "    print('REACHED')\nexcept OSError as exc:\n    print('blocked', exc)\n"
    answer = call(box, "run_python", code=probe)
    assert answer.startswith("exit code 0") and "blocked" in answer and "REACHED" not in answer
    assert "HTTP_PROXY" not in call(box, "run_python", code="import os; print(dict(os.environ))")
    slow = call(box, "run_python", timeout_s=2, code="import time; time.sleep(60)")
    assert slow.startswith("timed out")


def test_the_endpoint_must_be_named_in_allow_host() -> None:
    url = "http://127.0.0.1:8000/v1"
    assert endpoint_problem(url, ["127.0.0.1"]) is None
    assert endpoint_problem(url, ["127.0.0.1:8000"]) is None
    assert "--allow-host 127.0.0.1" in (endpoint_problem(url, ["127.0.0.1:9000"]) or "")
    assert "--allow-host api.openai.com" in (
        endpoint_problem("https://api.openai.com/v1", []) or ""
    )
    assert "http(s) URL" in (endpoint_problem("ftp://x/v1", ["x"]) or "")


def test_unknown_builtin_names_the_choices(local_sandbox: Sandbox) -> None:
    model = ModelConfig(model="m", api_key="sk-hush")
    with pytest.raises(ReplicateError, match="choose one of builtin:openai, builtin:openai-single"):
        make_agent(AgentConfig("builtin:claude", local_sandbox), model)
    agent = make_agent(
        AgentConfig("builtin:openai", local_sandbox, allow_hosts=("api.openai.com",)), model
    )
    assert agent.identity.startswith("builtin:openai model=m base_url=https://api.openai.com/v1")
    assert "sk-hush" not in repr(model) and "sk-hush" not in agent.identity
