"""The agent's side of the protocol: its scrubbed environment and its interpreter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replicate.agents.protocol import AgentConfig, agent_env, run_agent
from replicate.agents.workspace import make_workspace
from replicate.jail.calls import RepoContext
from replicate.sandbox.base import Sandbox
from tests.integration.minted import CORE_PATH, Tiny

PROTOCOL = {
    "REPLICATE_TASK_ID",
    "REPLICATE_WORKSPACE",
    "REPLICATE_PROMPT",
    "REPLICATE_TARGET_FILE",
    "REPLICATE_TARGET",
}
BASE = {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE"}

PROBE = (
    "import json, os, sys, tinypkg\n"
    "print(json.dumps({'env': dict(os.environ), 'exe': sys.executable,"
    " 'pkg': tinypkg.__file__, 'cwd': os.getcwd(), 'path': sys.path}))\n"
)


def test_agent_env_values(tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox) -> None:
    task = tiny.task("tinypkg.core.Counter.add")
    ws = Path("/work/ws")
    config = AgentConfig(command="true", sandbox=local_sandbox, passed_env={"MY_KEY": "v"})
    env = agent_env(task, ws, tiny_ctx, config)
    assert set(env) == PROTOCOL | BASE | {"MY_KEY"}
    assert env["REPLICATE_TASK_ID"] == task.id
    assert env["REPLICATE_WORKSPACE"] == "/work/ws"
    assert env["REPLICATE_PROMPT"] == "/work/ws/TASK.md"
    assert env["REPLICATE_TARGET_FILE"] == CORE_PATH
    assert env["REPLICATE_TARGET"] == "tinypkg.core.Counter.add"
    assert env["PATH"].split(":")[0] == f"{tiny_ctx.env_root}/bin"
    assert env["PYTHONPATH"].split(":")[0] == "/work/ws/src"
    assert env["MY_KEY"] == "v"


def test_passed_env_cannot_override_the_protocol(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    hostile = {"REPLICATE_TARGET_FILE": "../../etc/passwd", "PATH": "/evil", "HOME": "/root"}
    config = AgentConfig(command="true", sandbox=local_sandbox, passed_env=hostile)
    env = agent_env(task, Path("/w"), tiny_ctx, config)
    assert env["REPLICATE_TARGET_FILE"] == CORE_PATH
    assert env["PATH"] != "/evil" and env["HOME"] == "/tmp"


@pytest.fixture(scope="module")
def probe(
    tiny: Tiny, tiny_ctx: RepoContext, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """What an agent sees, as reported by `python` inside the sandbox."""
    from replicate.sandbox import get_sandbox

    task = tiny.task("tinypkg.core.clamp")
    ws = make_workspace(task, tmp_path_factory.mktemp("agent") / "ws")
    (ws / "probe.py").write_text(PROBE)
    config = AgentConfig(
        command="python probe.py > probe.json", sandbox=get_sandbox("local"), timeout_s=60
    )
    outcome = run_agent(task, ws, tiny_ctx, config)
    assert outcome.status == "ok", outcome.log_tail
    return {"ws": str(ws), **json.loads((ws / "probe.json").read_text())}


def test_sandboxed_agent_sees_exactly_the_protocol_environment(probe: dict[str, Any]) -> None:
    env = probe["env"]
    assert set(env) - {"PWD"} == PROTOCOL | BASE  # the shell running CMD sets PWD itself
    assert env["REPLICATE_WORKSPACE"] == probe["ws"] == probe["cwd"]
    assert env["HOME"] == "/tmp" and env["TMPDIR"] == "/tmp"
    assert env["LANG"] == "C.UTF-8" and env["LC_ALL"] == "C.UTF-8"


def test_python_is_the_repo_environment_and_imports_from_the_workspace(
    probe: dict[str, Any],
    tiny_ctx: RepoContext,
) -> None:
    assert Path(probe["exe"]).parent == tiny_ctx.env_root / "bin"
    assert probe["pkg"] == str(Path(probe["ws"]) / "src" / "tinypkg" / "__init__.py")


def test_agent_status_from_exit_code(tiny: Tiny, tiny_ctx: RepoContext, tmp_path: Path) -> None:
    from replicate.sandbox import get_sandbox

    task = tiny.task("tinypkg.core.clamp")
    ws = make_workspace(task, tmp_path / "ws")
    sandbox = get_sandbox("local")
    failed = run_agent(task, ws, tiny_ctx, AgentConfig("echo oops >&2; exit 3", sandbox))
    assert (failed.status, failed.exit_code) == ("error", 3)
    assert "oops" in failed.log_tail
    slow = run_agent(task, ws, tiny_ctx, AgentConfig("sleep 30", sandbox, timeout_s=0.5))
    assert slow.status == "timeout" and slow.duration_s < 10
