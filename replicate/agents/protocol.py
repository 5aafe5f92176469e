"""Running an agent command on one workspace, by the public agent protocol (docs/design.md §1)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replicate.agents import egress_relay
from replicate.agents.egress import EgressProxy, EgressRecord, parse_allow_hosts
from replicate.agents.workspace import PROMPT_NAME
from replicate.batch import LoadedTask
from replicate.core import AgentStatus
from replicate.jail import Limits, Mount, RepoContext, Sandbox, SandboxRequest

DEFAULT_AGENT_TIMEOUT_S = 1800.0
DEFAULT_DISK_QUOTA_MB = 1024  # the workspace's total size (agents/quota.py); None: no cap
AGENT_LIMITS = Limits(memory_mb=8192, pids=1024, file_size_mb=1024, output_bytes=1_000_000)


@dataclass(frozen=True)
class AgentConfig:
    command: str
    sandbox: Sandbox
    timeout_s: float = DEFAULT_AGENT_TIMEOUT_S
    mounts: tuple[str, ...] = ()
    passed_env: Mapping[str, str] | None = None  # values of the --env names, read by the CLI
    allow_hosts: tuple[str, ...] = ()  # --allow-host values: egress through the filtering proxy
    disk_quota_mb: int | None = DEFAULT_DISK_QUOTA_MB


@dataclass(frozen=True)
class AgentOutcome:
    status: AgentStatus
    exit_code: int | None
    duration_s: float
    log_tail: str
    egress: tuple[EgressRecord, ...] = ()  # targets the agent asked the proxy for (--allow-host)
    infra_error: str | None = None  # our side failed (a model endpoint unreachable): not graded
    prompt_tokens: int | None = None  # a built-in agent's model usage (agents/llm_agent.py)
    completion_tokens: int | None = None
    transcript: Mapping[str, Any] | None = None  # saved by the run under RUN_DIR/transcripts/
    stdout: bytes = b""  # the agent command's whole output (capped by the sandbox's limits),
    stderr: bytes = b""  # saved by the run under RUN_DIR/logs/


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
    if config.allow_hosts:
        env.update(proxy_env())
    return env


# --- egress (--allow-host): the relay inside, the filtering proxy outside ---------------------

RELAY_PORT = 3128  # on the sandbox's own loopback: nothing else listens there
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")


def relay_path() -> str:
    """The relay's source file, mounted read-only into the sandbox at the same path."""
    return str(Path(egress_relay.__file__).resolve())


def proxy_env() -> dict[str, str]:
    """The variables that send the agent's HTTP(S) clients through the relay; nothing bypasses."""
    url = f"http://127.0.0.1:{RELAY_PORT}"
    names = [*PROXY_VARIABLES, *(name.lower() for name in PROXY_VARIABLES)]
    return {**dict.fromkeys(names, url), "NO_PROXY": "", "no_proxy": ""}


def relay_argv(ctx: RepoContext, socket_path: str, argv: tuple[str, ...]) -> tuple[str, ...]:
    """`argv` started by the relay, which forwards 127.0.0.1:RELAY_PORT to the proxy's socket."""
    relay = (str(ctx.python), "-I", "-S", "-B", relay_path())
    return (*relay, socket_path, str(RELAY_PORT), "--", *argv)


def run_agent(
    task: LoadedTask, workspace: Path, ctx: RepoContext, config: AgentConfig
) -> AgentOutcome:
    """Run the agent; with `allow_hosts`, behind a filtering proxy alive for this run only."""
    if not config.allow_hosts:
        return _run_sandboxed(task, workspace, ctx, config, None)
    if not config.sandbox.isolated:
        raise ValueError(f"--allow-host needs an isolating sandbox, not {config.sandbox.name!r}")
    with EgressProxy(parse_allow_hosts(config.allow_hosts)) as proxy:
        outcome = _run_sandboxed(task, workspace, ctx, config, proxy.socket_path)
    return dataclasses.replace(outcome, egress=proxy.records())


# --- end of egress ----------------------------------------------------------------------------


def agent_request(
    task: LoadedTask,
    workspace: Path,
    ctx: RepoContext,
    config: AgentConfig,
    argv: tuple[str, ...],
    *,
    timeout_s: float,
    proxy_socket: str | None = None,
) -> SandboxRequest:
    """`argv` as the agent runs it: in the workspace, the scrubbed environment, the agent's
    mounts and limits; behind the relay only when `proxy_socket` is given."""
    mounts = [Mount.same(str(workspace), writable=True), Mount.same(str(ctx.env_root))]
    if ctx.meta is not None:
        mounts.append(Mount.same(str(ctx.meta)))
    mounts += [Mount.same(path) for path in config.mounts]
    if proxy_socket is not None:
        mounts += [Mount.same(proxy_socket), Mount.same(relay_path())]
        argv = relay_argv(ctx, proxy_socket, argv)
    else:
        config = dataclasses.replace(config, allow_hosts=())  # no proxy variables: no way out
    return SandboxRequest(
        argv=argv,
        env=agent_env(task, workspace, ctx, config),
        cwd=str(workspace),
        timeout_s=timeout_s,
        mounts=tuple(mounts),
        limits=AGENT_LIMITS,
    )


def _run_sandboxed(
    task: LoadedTask,
    workspace: Path,
    ctx: RepoContext,
    config: AgentConfig,
    proxy_socket: str | None,
) -> AgentOutcome:
    argv: tuple[str, ...] = ("/bin/sh", "-c", config.command)
    request = agent_request(
        task, workspace, ctx, config, argv, timeout_s=config.timeout_s, proxy_socket=proxy_socket
    )
    result = config.sandbox.run(request)
    status: AgentStatus = "ok"
    if result.timed_out:
        status = "timeout"
    elif result.exit_code != 0:
        status = "error"
    tail = (result.stdout[-2000:] + result.stderr[-2000:]).decode("utf-8", "replace")
    return AgentOutcome(
        status,
        result.exit_code,
        round(result.duration_s, 3),
        tail,
        stdout=result.stdout,
        stderr=result.stderr,
    )
