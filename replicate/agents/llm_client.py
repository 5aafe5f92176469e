"""The model endpoint of the built-in agents: any OpenAI-compatible chat-completions server,
called from the host with the real `openai` client.

Retries are the client's own (`max_retries`): it retries 408, 409, 429 and every 5xx answer and
a dropped connection, with exponential backoff and jitter (0.5 s doubling to 8 s), honouring a
server's `Retry-After`.  A request, its retries and its backoff all end by one deadline, the
attempt's remaining time, and a body must arrive faster than a floor (`llm_deadline`): an
endpoint that never answers, or answers a byte a second, is `ModelDeadline`.

What is left after the retries is classified here: an endpoint that cannot be reached, refuses
the key (401/403), knows no such model or path (404), keeps failing or runs out the deadline is
our side's failure (`ModelInfraError`: the attempt becomes an `infra_error` row, never a reward
of 0); a request the server rejects (400, 413, 422: a context too long) is the agent's failure
(`ModelRefused`: the attempt is graded on what the workspace holds).

`openai` is imported when the first client is made, never at import time.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from replicate.agents import llm_deadline
from replicate.agents.egress import parse_allow_hosts

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
MAX_RETRIES = 4
DEFAULT_MAX_STEPS = 30
DEFAULT_MAX_TOKENS = 200_000
DEFAULT_TOOL_TIMEOUT_S = 120.0
MAX_REQUEST_S = 600.0


@dataclass(frozen=True)
class ModelConfig:
    """A built-in agent's model and budgets; the key is never printed nor recorded."""

    model: str
    api_key: str = field(repr=False)
    base_url: str = DEFAULT_BASE_URL
    max_steps: int = DEFAULT_MAX_STEPS  # model calls per attempt
    max_tokens: int = DEFAULT_MAX_TOKENS  # prompt + completion tokens per attempt
    tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S  # one sandboxed command of a tool call

    @property
    def identity(self) -> str:
        """What a resumed run must agree on (recorded in run.json)."""
        return f"model={self.model} base_url={self.base_url}"


class ModelInfraError(Exception):
    """The endpoint is unreachable, refuses the key, or keeps failing after the retries."""


class ModelDeadline(ModelInfraError):
    """The endpoint did not answer within the attempt's remaining time (however it stalled)."""


class ModelRefused(Exception):
    """The server rejected the request itself (400/413/422): the agent's attempt ends there."""


@dataclass(frozen=True)
class Completion:
    message: Mapping[str, Any]  # the assistant message, as sent back in the next request
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    duration_s: float


def endpoint(base_url: str) -> tuple[str, int]:
    """The host and port a base URL connects to; ValueError for what is not an http(s) URL."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"--base-url must be an http(s) URL, not {base_url!r}")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"--base-url has a bad port: {base_url!r}") from None
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


def endpoint_problem(base_url: str, allow_hosts: Sequence[str]) -> str | None:
    """Why the model endpoint may not be called: its host must be named in --allow-host."""
    try:
        host, port = endpoint(base_url)
        rules = parse_allow_hosts(allow_hosts)
    except ValueError as exc:
        return str(exc)
    if any(rule.matches(host, port) for rule in rules):
        return None
    return (
        f"the model endpoint {host}:{port} is not allowed: name it with --allow-host {host} "
        "(the agent reaches its model only through --allow-host)"
    )


class ChatClient:
    """One attempt's client: `complete` sends the conversation and returns the reply."""

    def __init__(self, config: ModelConfig) -> None:
        import openai  # a heavy import, needed only when a built-in agent runs

        self._openai = openai
        self._config = config
        self._client = openai.OpenAI(
            api_key=config.api_key,
            base_url=config.base_url,
            max_retries=MAX_RETRIES,
            http_client=llm_deadline.http_client(openai),
        )

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None,
        timeout_s: float,
    ) -> Completion:
        """The reply, within `timeout_s` whatever the endpoint does (ModelDeadline if not)."""
        started = time.monotonic()
        extra: dict[str, Any] = {"tools": list(tools)} if tools else {}
        seconds = min(timeout_s, MAX_REQUEST_S)

        def request() -> Any:
            return self._client.chat.completions.create(
                model=self._config.model,
                messages=list(messages),  # type: ignore[arg-type]
                timeout=max(1.0, seconds),
                **extra,
            )

        try:
            response = llm_deadline.within(seconds, request, abandon=self.close)
        except llm_deadline.DeadlinePassed:
            raise ModelDeadline(
                f"model endpoint gave no answer within {seconds:.0f} s (the attempt's remaining "
                f"time, at most {MAX_REQUEST_S:g} s a request)"
            ) from None
        except Exception as exc:  # noqa: BLE001 - sorted into ours and the agent's below
            raise self._classify(exc) from None
        if not response.choices:
            raise ModelRefused("the server answered with no choice")
        choice = response.choices[0]
        usage = response.usage
        return Completion(
            message=assistant_message(choice.message),
            finish_reason=choice.finish_reason,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            duration_s=round(time.monotonic() - started, 3),
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _classify(self, exc: Exception) -> Exception:
        errors = self._openai
        first = (str(exc).splitlines() or [""])[0][:300]
        if isinstance(exc, errors.APITimeoutError):
            return ModelInfraError(f"model endpoint timed out: {first}")
        if isinstance(exc, errors.APIConnectionError):
            return ModelInfraError(f"model endpoint unreachable: {first}")
        if isinstance(exc, errors.AuthenticationError | errors.PermissionDeniedError):
            return ModelInfraError(f"model endpoint refused the key ({exc.status_code}): {first}")
        if isinstance(exc, errors.NotFoundError):
            return ModelInfraError(f"model endpoint has no such model or path (404): {first}")
        if isinstance(exc, errors.APIStatusError) and exc.status_code in (400, 413, 422):
            return ModelRefused(f"model endpoint rejected the request ({exc.status_code}): {first}")
        if isinstance(exc, errors.APIStatusError):
            return ModelInfraError(f"model endpoint failed ({exc.status_code}): {first}")
        return ModelInfraError(f"model call failed: {type(exc).__name__}: {first}")


def assistant_message(message: Any) -> dict[str, Any]:
    """The reply as a plain chat message: role, content and tool calls (nothing else)."""
    out: dict[str, Any] = {"role": "assistant", "content": message.content}
    calls = [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.function.name, "arguments": call.function.arguments},
        }
        for call in (message.tool_calls or ())
        if getattr(call, "function", None) is not None
    ]
    if calls:
        out["tool_calls"] = calls
    return out
