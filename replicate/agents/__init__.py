"""An attempt by an agent at one task: its workspace, the sandbox it runs in, its egress.

`registry` names what `replicate run --agent` accepts (a command, or a built-in model agent);
`protocol` runs a command agent by the public agent protocol; `workspace` makes the stubbed tree.
"""

from __future__ import annotations

from replicate.agents.egress import parse_allow_hosts
from replicate.agents.llm_client import (
    DEFAULT_BASE_URL,
    DEFAULT_KEY_ENV,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TOKENS,
    ModelConfig,
)
from replicate.agents.protocol import (
    DEFAULT_AGENT_TIMEOUT_S,
    DEFAULT_DISK_QUOTA_MB,
    AgentConfig,
    AgentOutcome,
)
from replicate.agents.quota import EXCEEDED, release_stale, workspace_quota
from replicate.agents.registry import Agent, builtin_names, is_builtin, make_agent
from replicate.agents.workspace import PROMPT_NAME, TargetRead, make_workspace, read_target

__all__ = [
    "DEFAULT_AGENT_TIMEOUT_S",
    "DEFAULT_BASE_URL",
    "DEFAULT_DISK_QUOTA_MB",
    "DEFAULT_KEY_ENV",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_MAX_TOKENS",
    "EXCEEDED",
    "PROMPT_NAME",
    "Agent",
    "AgentConfig",
    "AgentOutcome",
    "ModelConfig",
    "TargetRead",
    "builtin_names",
    "is_builtin",
    "make_agent",
    "make_workspace",
    "parse_allow_hosts",
    "read_target",
    "release_stale",
    "workspace_quota",
]
