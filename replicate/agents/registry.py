"""Agents are a plug-in point: what `replicate run --agent` names.

An agent makes one attempt at one task in a prepared workspace and says how it went
(`AgentOutcome`); the run reads the target file back and grades it, whoever wrote it.  The
default is a shell command run in the sandbox (`agents/protocol.py`); `builtin:<name>` picks one of
the `BUILTINS` (each made lazily: the `openai` client is imported only when one runs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from replicate.agents.llm_client import ModelConfig, endpoint_problem
from replicate.agents.protocol import AgentConfig, AgentOutcome, run_agent
from replicate.batch import LoadedTask
from replicate.errors import ReplicateError
from replicate.jail import RepoContext

BUILTIN_PREFIX = "builtin:"


class Agent(Protocol):
    """One attempt at one task; `identity` is what a resumed run must agree on (run.json).

    Made once per run by `make_agent` (a new kind is a `BUILTINS` factory, or a command); its
    `attempt` is called from several worker threads at once, one task and workspace each, so an
    agent keeps no per-attempt state on itself."""

    @property
    def identity(self) -> str:
        """A stable text naming this agent and its settings (the command, the model): the same
        for the same choice in every process, different when a resumed run would differ."""
        ...

    def attempt(self, task: LoadedTask, workspace: Path, ctx: RepoContext) -> AgentOutcome:
        """Work on `task` in `workspace` (the stubbed tree and TASK.md, already written) and
        say how it went; the run then reads the target file back from `workspace` and grades
        it, whatever the outcome says. `ctx` is the repository's context (its environment,
        for running code in `ctx`'s sandbox).

        Returns an `AgentOutcome`: a failure of the agent (non-zero exit, timeout) is a
        status, our side's failure (a model endpoint unreachable) is `infra_error` (the task
        is then not graded). An exception is recorded as the run's infra_error for this task.
        Never runs the agent's code (its commands, a model's tool calls) outside the sandbox,
        never writes outside `workspace`, and never reads the task's hidden part
        (`task.hidden`, the inputs, the expected outcomes): the agent sees what the workspace
        shows."""
        ...


@dataclass(frozen=True)
class ShellAgent:
    """The agent protocol of docs/design.md §1: a shell command in the sandbox."""

    config: AgentConfig

    @property
    def identity(self) -> str:
        return self.config.command

    def attempt(self, task: LoadedTask, workspace: Path, ctx: RepoContext) -> AgentOutcome:
        return run_agent(task, workspace, ctx, self.config)


def _tool_agent(config: AgentConfig, model: ModelConfig) -> Agent:
    from replicate.agents.llm_agent import ToolAgent  # lazy: imports openai only when used

    return ToolAgent(config, model)


def _single_agent(config: AgentConfig, model: ModelConfig) -> Agent:
    from replicate.agents.llm_agent import SingleAgent  # lazy: imports openai only when used

    return SingleAgent(config, model)


BUILTINS: dict[str, Callable[[AgentConfig, ModelConfig], Agent]] = {
    "openai": _tool_agent,
    "openai-single": _single_agent,
}


def builtin_names() -> tuple[str, ...]:
    return tuple(BUILTIN_PREFIX + name for name in BUILTINS)


def is_builtin(command: str) -> bool:
    return command.startswith(BUILTIN_PREFIX)


def make_agent(config: AgentConfig, model: ModelConfig | None = None) -> Agent:
    """The agent `config.command` names; one-line ReplicateError for a bad built-in choice."""
    if not is_builtin(config.command):
        if model is not None:
            raise ReplicateError("--model is for the built-in agents (--agent builtin:NAME)")
        return ShellAgent(config)
    name = config.command.removeprefix(BUILTIN_PREFIX)
    factory = BUILTINS.get(name)
    if factory is None:
        raise ReplicateError(
            f"no built-in agent {config.command!r}; choose one of {', '.join(builtin_names())}"
        )
    if model is None:
        raise ReplicateError(f"--agent {config.command} needs --model NAME")
    problem = endpoint_problem(model.base_url, config.allow_hosts)
    if problem:
        raise ReplicateError(problem)
    return factory(config, model)
