"""Warm Node jails: a candidate's run of a JavaScript/TypeScript target in a jail started ahead
of it, from the same `WarmPool` as Python's (`warm`).

Node cannot fork, so a Node target has no sessions: the warm jail is the whole of it. A slot is
the runner's request as a cold run makes it (`node.runner_request`: the same memory, seed,
clock shift, the tree's npm dependencies mounted, the TypeScript loader for a TypeScript
target), with the slot's empty file bound read-only over the target's file and the job's line
(`node.job_for`) sent at its start: the runner loads its own modules and the loader, parses the
job and blocks reading the nonce (`runner_js/main.cjs`). To run, the candidate's bytes are
written into that file on the host, then the nonce is sent; the runner loads the target only
then. One use each: every candidate gets its own process, so what one does to `Object.prototype`
or a global is gone with its jail. A slot that cannot be had (its start failed) or that died
before it read its nonce (no ``started`` frame: no candidate code ran in it) is replaced by a
cold run, which gives the same outcomes.
"""

from __future__ import annotations

import secrets
from collections.abc import Hashable, Sequence
from pathlib import Path

from replicate.errors import InfraError
from replicate.jail.node import (
    NodeCall,
    NodeRun,
    NodeSettings,
    NodeTarget,
    job_for,
    node_run,
    run_node,
    runner_request,
)
from replicate.jail.warm import RequestFor, WarmJail, WarmPool
from replicate.sandbox import Mount, Sandbox, SandboxRequest, StopWhen


def warm_job(
    tree: Path, target: NodeTarget, calls: Sequence[NodeCall], settings: NodeSettings
) -> tuple[Hashable, RequestFor]:
    """The key of a warm jail for these calls of `target` and how to start one, given the
    slot's candidate file (bound read-only over the target's file)."""
    tree = tree.resolve()
    job = job_for(tree, target, calls)
    inside = str(tree / target.module)

    def request_for(candidate: Path) -> SandboxRequest:
        shown = [Mount.same(str(tree)), Mount(str(candidate), inside)]
        return runner_request(tree, target, job, settings, shown)

    return ("node", str(tree), target, settings, job), request_for


def prewarm_node(
    pool: WarmPool,
    tree: Path,
    target: NodeTarget,
    calls: Sequence[NodeCall],
    settings: NodeSettings,
    up_to: int = 1,
) -> None:
    """Start (in the background) the warm jails (`up_to` of them) later `run_node_warm`s of
    candidates for these calls will take: a grade takes one a run, and runs a candidate that
    earned anything twice (`grading.javascript_verdict`)."""
    pool.fill(*warm_job(tree, target, calls, settings), up_to=up_to)


def run_node_warm(
    sandbox: Sandbox,
    pool: WarmPool,
    tree: Path,
    target: NodeTarget,
    calls: Sequence[NodeCall],
    candidate: bytes,
    settings: NodeSettings,
) -> NodeRun:
    """`node.run_node` of `candidate` in a warm jail from `pool` (the same outcomes); a cold run
    where the sandbox does not isolate, no slot could be started, or the slot died before its
    runner read the nonce."""
    if not sandbox.isolated:
        return run_node(sandbox, tree, target, calls, candidate=candidate, settings=settings)
    try:
        slot = pool.take(*warm_job(tree, target, calls, settings))
    except (InfraError, OSError):
        return run_node(sandbox, tree, target, calls, candidate=candidate, settings=settings)
    try:
        run = _finish(slot, candidate, settings.timeout_s, len(calls))
    finally:
        slot.replace()
    if run is None or not run.started:
        return run_node(sandbox, tree, target, calls, candidate=candidate, settings=settings)
    return run


def _finish(slot: WarmJail, candidate: bytes, timeout_s: float, count: int) -> NodeRun | None:
    """The slot's run of `candidate`; None when its sandbox failed before the command ran."""
    nonce = secrets.token_hex(16)
    try:
        result = slot.run(candidate, nonce.encode(), timeout_s, _until_done(nonce))
    except InfraError:
        return None
    return node_run(result, nonce, count)


def _until_done(nonce: str) -> StopWhen:
    """Ends the run at the runner's ``done`` frame, its last write (killing the jail there
    saves waiting for the process and its namespaces to wind down, as Python's warm runs do)."""
    done = f'{nonce} {{"event":"done"}}\n'.encode()
    seen = bytearray()

    def stop(chunk: bytes, at: float) -> bool:
        seen.extend(chunk)
        found = done in seen
        del seen[: max(0, len(seen) - len(done))]
        return found

    return stop
