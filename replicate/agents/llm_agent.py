"""The built-in agents: a model behind an OpenAI-compatible endpoint, scored on install day.

- `builtin:openai`: a tool loop.  The model sees TASK.md and works through the tools of
  `agents/llm_tools.py` (list, read, write, edit files; run Python or the tests in the sandbox)
  until it answers without a tool call or a budget (model calls, tokens, wall time) is spent.
- `builtin:openai-single`: one completion from TASK.md and the stubbed target file; the reply
  is written as the target file as it is, and the grader's one splicing rule (the language
  adapter's `splice`: the code of the answer found, a bare `def` accepted) makes it a
  candidate — the shape RL trainers sample in.

They live in `agents/` beside the shell agent because they are agents in the same sense: they
act on one workspace, and every command they run goes through the agent's sandbox
(`agents/protocol.py`); `scoring/` chooses and drives them through `agents/registry.py` without
knowing which.  The model calls run on the host (the key never enters the sandbox), which is why
the endpoint must be named in `--allow-host` (`llm_client.endpoint_problem`).

Whatever happens, the attempt's transcript (every message, tool call and result, per-call token
usage) comes back in `AgentOutcome.transcript` for the run to save; an endpoint that cannot be
reached or refuses the key comes back as `AgentOutcome.infra_error`, never as a reward of 0.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replicate import confined
from replicate.agents.llm_client import (
    ChatClient,
    Completion,
    ModelConfig,
    ModelDeadline,
    ModelInfraError,
    ModelRefused,
)
from replicate.agents.llm_tools import Toolbox, language_name, tools_for
from replicate.agents.protocol import AgentConfig, AgentOutcome
from replicate.batch import LoadedTask
from replicate.core import AgentStatus
from replicate.jail import RepoContext

TOOL_SYSTEM = (
    "You are a software engineer working in a repository checked out in your workspace. "
    "TASK.md at its root says which function to implement and how the work is graded. Use the "
    "tools to read the code, write the implementation into the target file, and run {runs} to "
    "check it (there is no network). Paths are relative to the workspace. When the "
    "implementation is done, answer with a short summary and no tool call."
)
# what a task's run tools run, as the system prompt says it
RUNS = {"Python": "Python or the tests"}
NODE_RUNS = "{name} with Node or the repository's {name} tests"
SINGLE_SYSTEM = (
    "You implement one {name} function so that it behaves exactly like a hidden original. Answer "
    "with one {fence} code block holding the function's complete definition (or the whole file)."
)


@dataclass
class _Tally:
    """What one attempt has spent so far (mutable, private to the attempt)."""

    timeout_s: float
    started: float = field(default_factory=time.monotonic)
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: list[dict[str, Any]] = field(default_factory=list)

    def remaining(self) -> float:
        return self.timeout_s - (time.monotonic() - self.started)

    def add(self, reply: Completion) -> None:
        self.steps += 1
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        self.calls.append(
            {
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "finish_reason": reply.finish_reason,
                "duration_s": reply.duration_s,
            }
        )


@dataclass(frozen=True)
class _Ending:
    status: AgentStatus
    note: str
    infra_error: str | None = None


class _ModelAgent:
    name = "builtin:?"

    def __init__(self, config: AgentConfig, model: ModelConfig) -> None:
        self.config = config
        self.model = model

    @property
    def identity(self) -> str:
        budget = f"max_steps={self.model.max_steps} max_tokens={self.model.max_tokens}"
        return f"{self.name} {self.model.identity} {budget}"

    def attempt(self, task: LoadedTask, workspace: Path, ctx: RepoContext) -> AgentOutcome:
        tally = _Tally(self.config.timeout_s)
        messages: list[dict[str, Any]] = []
        try:
            ending = self._work(task, workspace, ctx, tally, messages)
        except ModelInfraError as exc:
            if tally.remaining() <= 0 and not isinstance(exc, ModelDeadline):
                ending = _Ending("timeout", f"wall-time budget spent: {exc}")
            else:
                ending = _Ending("error", str(exc), infra_error=str(exc))
        except ModelRefused as exc:
            ending = _Ending("error", str(exc))
        except Exception as exc:  # noqa: BLE001 - ours (a sandbox that failed): keep the transcript
            problem = f"harness error: {type(exc).__name__}: {exc}"
            ending = _Ending("error", problem, infra_error=problem)
        transcript = {
            "agent": self.name,
            "model": self.model.model,
            "base_url": self.model.base_url,
            "status": ending.status,
            "stop": ending.note,
            "steps": tally.steps,
            "prompt_tokens": tally.prompt_tokens,
            "completion_tokens": tally.completion_tokens,
            "calls": tally.calls,
            "messages": messages,
        }
        return AgentOutcome(
            status=ending.status,
            exit_code=None,
            duration_s=round(time.monotonic() - tally.started, 3),
            log_tail=ending.note,
            infra_error=ending.infra_error,
            prompt_tokens=tally.prompt_tokens,
            completion_tokens=tally.completion_tokens,
            transcript=transcript,
        )

    def _work(
        self,
        task: LoadedTask,
        workspace: Path,
        ctx: RepoContext,
        tally: _Tally,
        messages: list[dict[str, Any]],
    ) -> _Ending:
        raise NotImplementedError


class ToolAgent(_ModelAgent):
    """`builtin:openai`: the model works in the workspace through tools."""

    name = "builtin:openai"

    def _work(
        self,
        task: LoadedTask,
        workspace: Path,
        ctx: RepoContext,
        tally: _Tally,
        messages: list[dict[str, Any]],
    ) -> _Ending:
        toolbox = Toolbox(task, workspace, ctx, self.config)
        messages += [
            {"role": "system", "content": tool_system(language_name(task))},
            {"role": "user", "content": task.prompt},
        ]
        with ChatClient(self.model) as client:
            return self._loop(client, toolbox, tally, messages)

    def _loop(
        self, client: ChatClient, toolbox: Toolbox, tally: _Tally, messages: list[dict[str, Any]]
    ) -> _Ending:
        while True:
            spent = self._spent(tally)
            if spent is not None:
                return spent
            reply = client.complete(messages, tools_for(toolbox.task), tally.remaining())
            tally.add(reply)
            messages.append(dict(reply.message))
            calls = reply.message.get("tool_calls") or []
            if not calls:
                return _Ending("ok", "the model answered without a tool call")
            for call in calls:
                budget = min(self.model.tool_timeout_s, tally.remaining())
                function = call["function"]
                result = (
                    toolbox.call(function["name"], function["arguments"], budget)
                    if budget > 0
                    else "error: the wall-time budget is spent"
                )
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})

    def _spent(self, tally: _Tally) -> _Ending | None:
        if tally.remaining() <= 0:
            return _Ending("timeout", f"wall-time budget of {self.config.timeout_s:g} s spent")
        if tally.steps >= self.model.max_steps:
            return _Ending("budget_exhausted", f"step budget of {self.model.max_steps} spent")
        if tally.prompt_tokens + tally.completion_tokens >= self.model.max_tokens:
            return _Ending("budget_exhausted", f"token budget of {self.model.max_tokens} spent")
        return None


class SingleAgent(_ModelAgent):
    """`builtin:openai-single`: one completion, written as the target file."""

    name = "builtin:openai-single"

    def _work(
        self,
        task: LoadedTask,
        workspace: Path,
        ctx: RepoContext,
        tally: _Tally,
        messages: list[dict[str, Any]],
    ) -> _Ending:
        target = task.hidden.target
        stubbed = task.stubbed_source().decode("utf-8", "replace")
        fence = task.spec.language
        system = SINGLE_SYSTEM.format(name=language_name(task), fence=fence)
        messages += [
            {"role": "system", "content": system},
            {"role": "user", "content": single_prompt(task.prompt, target.path, stubbed, fence)},
        ]
        with ChatClient(self.model) as client:
            reply = client.complete(messages, None, tally.remaining())
        tally.add(reply)
        messages.append(dict(reply.message))
        content = reply.message.get("content") or ""
        confined.write_bytes(workspace, target.path, content.encode("utf-8"))
        return _Ending("ok", f"one completion ({reply.finish_reason})")


def tool_system(name: str) -> str:
    """The tool agent's system prompt on a task in the language `name` ("Python", ...)."""
    return TOOL_SYSTEM.format(runs=RUNS.get(name, NODE_RUNS.format(name=name)))


def single_prompt(prompt: str, path: str, stubbed: str, fence: str = "python") -> str:
    """TASK.md, then the target file as the workspace holds it (the body stubbed), in a code
    block tagged with the task's language."""
    return (
        f"{prompt.rstrip()}\n\n## `{path}` as it stands\n\n```{fence}\n{stubbed.rstrip()}\n```\n\n"
        f"Reply with the implementation in one {fence} code block."
    )
