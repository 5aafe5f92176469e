"""The sandbox request of a Node run: what it mounts, its environment and limits (no run)."""

from __future__ import annotations

from pathlib import Path

from replicate.jail.calls import shifted_clock_env
from replicate.jail.node import (
    NODE_ADDRESS_SPACE_MB,
    NODE_ENV,
    RUNNER_DIR,
    NodeSettings,
    node_request,
)
from replicate.sandbox import Mount


def test_a_node_outside_the_base_system_is_mounted_with_its_prefix() -> None:
    tree = Path("/work/tree")
    debian = node_request(tree, b"{}", NodeSettings(), node=Path("/usr/bin/node"))
    assert debian.mounts == (Mount.same(str(RUNNER_DIR)), Mount.same(str(tree)))
    elsewhere = node_request(tree, b"{}", NodeSettings(), node=Path("/opt/node-v20/bin/node"))
    assert elsewhere.mounts[0] == Mount.same("/opt/node-v20")
    assert elsewhere.argv[0] == "/opt/node-v20/bin/node"


def test_settings_become_flags_environment_and_limits() -> None:
    settings = NodeSettings(timeout_s=5, memory_mb=512, random_seed=9, clock_shift_days=2)
    request = node_request(Path("/t"), b"{}", settings, node=Path("/usr/bin/node"))
    assert "--random-seed=9" in request.argv
    assert request.env == {**NODE_ENV, **shifted_clock_env(2)}
    assert (request.timeout_s, request.limits.memory_mb) == (5, 512)
    assert request.limits.address_space_mb == NODE_ADDRESS_SPACE_MB
    assert not request.network and request.channel
    plain = node_request(Path("/t"), b"{}", NodeSettings(), node=Path("/usr/bin/node"))
    assert not any(a.startswith("--random-seed") for a in plain.argv)
    assert "FAKETIME" not in plain.env and "PYTHONHASHSEED" not in plain.env
