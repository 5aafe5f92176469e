"""Running an agent command on one workspace, by the public agent protocol (BRIEF §3)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from replicate.batch.store import LoadedTask
from replicate.core.records import AgentStatus
from replicate.harness.jail import RepoContext
from replicate.harness.sandbox.base import Limits, Mount, Sandbox, SandboxRequest
from replicate.harness.workspace import PROMPT_NAME

DEFAULT_AGENT_TIMEOUT_S = 1800.0
AGENT_LIMITS = Limits(memory_mb=8192, pids=1024, file_size_mb=1024, output_bytes=1_000_000)


@dataclass(frozen=True)
class AgentConfig:
    command: str
    sandbox: Sandbox
    timeout_s: float = DEFAULT_AGENT_TIMEOUT_S
    mounts: tuple[str, ...] = ()
    passed_env: Mapping[str, str] | None = None  # values of the --env names, read by the CLI


@dataclass(frozen=True)
class AgentOutcome:
    status: AgentStatus
    exit_code: int | None
    duration_s: float
    log_tail: str


def agent_env(
    task: LoadedTask, workspace: Path, ctx: RepoContext, config: AgentConfig
) -> dict[str, str]:
    """The scrubbed environment: PATH with the repo's Python first, fresh HOME/TMPDIR, variables."""
    python_path = ctx.sys_path(workspace)
    env = {
        **(config.passed_env or {}),
        "PATH": f"{ctx.env_root}/bin:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONPATH": ":".join(python_path),
        "PYTHONDONTWRITEBYTECODE": "1",
        "REPLICATE_TASK_ID": task.id,
        "REPLICATE_WORKSPACE": str(workspace),
        "REPLICATE_PROMPT": str(workspace / PROMPT_NAME),
        "REPLICATE_TARGET_FILE": task.hidden.target.path,
        "REPLICATE_TARGET": task.hidden.target.symbol,
    }
    return env


def run_agent(
    task: LoadedTask, workspace: Path, ctx: RepoContext, config: AgentConfig
) -> AgentOutcome:
    mounts = [Mount.same(str(workspace), writable=True), Mount.same(str(ctx.env_root))]
    if ctx.meta is not None:
        mounts.append(Mount.same(str(ctx.meta)))
    mounts += [Mount.same(path) for path in config.mounts]
    request = SandboxRequest(
        argv=("/bin/sh", "-c", config.command),
        env=agent_env(task, workspace, ctx, config),
        cwd=str(workspace),
        timeout_s=config.timeout_s,
        mounts=tuple(mounts),
        limits=AGENT_LIMITS,
    )
    result = config.sandbox.run(request)
    status: AgentStatus = "ok"
    if result.timed_out:
        status = "timeout"
    elif result.exit_code != 0:
        status = "error"
    tail = (result.stdout[-2000:] + result.stderr[-2000:]).decode("utf-8", "replace")
    return AgentOutcome(status, result.exit_code, round(result.duration_s, 3), tail)
