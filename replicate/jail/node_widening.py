"""Widening a JavaScript target's inputs from the calls recorded for it: fast-check (pinned,
`node_tools.FAST_CHECK`) builds an arbitrary shaped like the recorded arguments and samples new
calls from it, seeded and bounded (`runner_js/widen.cjs`, which says how each kind of value is
varied). It runs in the sandbox like everything else that runs JavaScript, though it runs none
of the repository: fast-check is loaded from the cache, mounted read-only, and the job and the
calls are tagged values (`replicate.values.javascript`) both ways.

Where fast-check lives, decided: installed into the cache (`npm install --ignore-scripts`, once)
and loaded from there in the jail, not shipped beside the runner: the runner stays Node
built-ins only, the project ships no third-party JavaScript, and a jail that widens mounts the
one folder it needs.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replicate.errors import InfraError
from replicate.jail.frames import read_frame
from replicate.jail.node import (
    MAX_DEPTH,
    MAX_ITEMS,
    RUNNER_DIR,
    NodeCall,
    NodeSettings,
    node_request,
)
from replicate.jail.node_tools import FAST_CHECK, tool_modules
from replicate.sandbox import CHANNEL_FD, Mount, Sandbox
from replicate.values import javascript as js

WIDEN = RUNNER_DIR / "widen.cjs"
WIDENED_EVENT = "widened"
DONE_EVENT = "done"
MAX_COUNT = 10_000
SETTINGS = NodeSettings(timeout_s=60.0)  # its own clock: fast-check loads and draws


@dataclass(frozen=True)
class Widening:
    """How many calls to draw (`count`; fewer come back when some repeat a recorded call or
    each other) and the seed that makes the draw the same every time."""

    count: int = 100
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.count <= MAX_COUNT:
            raise ValueError(f"count {self.count} outside 0..{MAX_COUNT}")


Args = tuple[js.JsValue, ...]


def widen_job(samples: Sequence[Args], widening: Widening, fast_check: Path, nonce: str) -> bytes:
    job: dict[str, Any] = {
        "nonce": nonce,
        "channel_fd": CHANNEL_FD,
        "fast_check": str(fast_check),
        "seed": widening.seed,
        "count": widening.count,
        "max_depth": MAX_DEPTH,
        "max_items": MAX_ITEMS,
        "samples": [[js.encode(a) for a in args] for args in samples],
    }
    return json.dumps(job).encode()


def widen_calls(
    sandbox: Sandbox,
    samples: Sequence[Args],
    widening: Widening = Widening(),
    settings: NodeSettings = SETTINGS,
) -> tuple[Args, ...]:
    """New argument tuples shaped like `samples` (each a recorded call's arguments), distinct
    and none equal to a sample, in the order drawn; the same for the same samples and seed."""
    if not samples or widening.count == 0:
        return ()
    modules = tool_modules(FAST_CHECK).resolve()
    nonce = secrets.token_hex(16)
    job = widen_job(samples, widening, modules / FAST_CHECK.package, nonce)
    mounts = (Mount.same(str(modules)),)
    request = node_request(modules, job, settings, mounts, script=(str(WIDEN),))
    result = sandbox.run(request)
    return read_widened(result.channel, nonce, result.exit_code)


def widen_node_calls(
    sandbox: Sandbox, calls: Sequence[NodeCall], widening: Widening = Widening()
) -> tuple[NodeCall, ...]:
    """`widen_calls` on recorded calls as `run_node` takes them: a method's calls keep a `this`
    of the recorded ones (an instance is never varied: its fields hold together), their
    arguments widened; a function's calls, their arguments."""
    selves = [c for c in calls if c.this is not None]
    if not selves:
        return tuple(
            NodeCall(args) for args in widen_calls(sandbox, [c.args for c in calls], widening)
        )
    samples = [(c.this, *c.args) for c in selves if c.this is not None]
    return tuple(NodeCall(args[1:], args[0]) for args in widen_calls(sandbox, samples, widening))


def read_widened(channel: bytes, nonce: str, exit_code: int | None) -> tuple[Args, ...]:
    """The widened calls of the script's channel; an `InfraError` where it did not finish."""
    prefix = f"{nonce} ".encode()
    calls: list[Args] = []
    done = False
    for line in channel.split(b"\n"):
        frame: Any = read_frame(line, prefix)
        if frame is None:
            continue
        if frame.get("event") == DONE_EVENT:
            done = True
        elif frame.get("event") == WIDENED_EVENT and type(frame.get("args")) is list:
            calls.append(tuple(js.decode(node) for node in frame["args"]))
    if not done:
        raise InfraError(f"widening with fast-check did not finish (exit code {exit_code})")
    return tuple(calls)
