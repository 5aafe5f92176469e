"""Record the calls a JavaScript repository's own tests make to its targets (the harvest's first
cut, CommonJS only): each test file runs as `node --require record.cjs <file>` in the jail
(`runner_js/record.cjs`, Node built-ins only: it wraps each target, an export or a module-scope
binding, and writes one frame per distinct call), and the frames come back as `Recorded`
calls that `node.run_node` replays: the call (arguments before it) and the outcome the tests saw.

A recorded outcome is what replaying the call on the original should give; whether it does is
the determinism check, the caller's (`replay`). The recorder runs inside the repository's own
process, so the tests could forge frames: what is recorded is input, never trusted as a result.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from replicate.errors import ReplicateError
from replicate.jail.frames import read_frame
from replicate.jail.node import (
    CHANNEL_CAP,
    MAX_DEPTH,
    MAX_ITEMS,
    RUNNER_DIR,
    CallKind,
    NodeCall,
    NodeOutcome,
    NodeSettings,
    NodeTarget,
    read_outcome,
    run_node,
)
from replicate.jail.node_tests import RunnerCommand, request_for_test_file
from replicate.jail.typescript import for_files
from replicate.sandbox import CHANNEL_FD, Sandbox, SandboxRequest
from replicate.values import javascript as js

RECORDER = RUNNER_DIR / "record.cjs"
RECORD_EVENT = "record"


@dataclass(frozen=True)
class HarvestBudget:
    """How many distinct calls are kept: `per_file` a target in one test file's process (so no
    single file spends a target's whole budget), `per_target` over all files."""

    per_target: int = 200
    per_file: int = 50


@dataclass(frozen=True)
class Recorded:
    target: NodeTarget
    call: NodeCall
    outcome: NodeOutcome  # as the tests saw it
    test_file: str  # the first test file that made the call
    visible: bool = False  # made straight from that file (not by the library while it ran)


@dataclass(frozen=True)
class FileRun:
    test_file: str
    recorded: int  # frames read from this file's process
    exit_code: int | None
    timed_out: bool


@dataclass(frozen=True)
class Harvest:
    calls: tuple[Recorded, ...]
    files: tuple[FileRun, ...]


def record_job(
    tree: Path, targets: Sequence[NodeTarget], nonce: str, per_file: int, test_file: str = ""
) -> str:
    for target in targets:
        if target.kind is not CallKind.FUNCTION and target.scope is not None:
            raise ReplicateError("recording a method of an unexported class is not supported yet")
    listed = [
        {
            "key": i,
            "module": str(tree / t.module),
            "export": list(t.export),
            "scope": t.scope,
            "kind": t.kind.value,
            "member": t.member,
        }
        for i, t in enumerate(targets)
    ]
    job = {
        "nonce": nonce,
        "channel_fd": CHANNEL_FD,
        "per_file": per_file,
        "test_file": str(tree / test_file) if test_file else "",
        "max_depth": MAX_DEPTH,
        "max_items": MAX_ITEMS,
        "targets": listed,
    }
    return json.dumps(job)


def record_tests(
    sandbox: Sandbox,
    tree: Path,
    targets: Sequence[NodeTarget],
    test_files: Sequence[str],
    *,
    budget: HarvestBudget = HarvestBudget(),
    command: RunnerCommand | None = None,
    settings: NodeSettings | None = None,
) -> Harvest:
    """Run each of `test_files` (relative to `tree`) in its own jailed Node process with the
    recorder, and keep the distinct calls to each of `targets`, in the order first made."""
    tree = tree.resolve()
    settings = settings or NodeSettings()
    command = command or RunnerCommand()
    kept: dict[tuple[int, NodeCall], Recorded] = {}
    counts = [0] * len(targets)
    files = []
    for test_file in test_files:
        nonce = secrets.token_hex(16)
        job = record_job(tree, targets, nonce, budget.per_file, test_file)
        request = _test_request(tree, test_file, command, settings, job, sandbox.isolated)
        ts_files = [test_file, *(t.module for t in targets)]
        result = sandbox.run(for_files(request, ts_files))
        frames = read_records(result.channel, nonce, len(targets))
        for key, call, outcome, visible in frames:
            if (key, call) in kept or counts[key] >= budget.per_target:
                continue
            counts[key] += 1
            kept[(key, call)] = Recorded(targets[key], call, outcome, test_file, visible)
        files.append(FileRun(test_file, len(frames), result.exit_code, result.timed_out))
    return Harvest(tuple(kept.values()), tuple(files))


def _test_request(
    tree: Path,
    test_file: str,
    command: RunnerCommand,
    settings: NodeSettings,
    job: str,
    isolated: bool,
) -> SandboxRequest:
    preload = ("--require", str(RECORDER))
    request = request_for_test_file(
        tree, test_file, command, settings, preload=preload, isolated=isolated
    )
    return replace(request, env={**request.env, "REPLICATE_RECORD": job})


def read_records(
    channel: bytes, nonce: str, n_targets: int
) -> list[tuple[int, NodeCall, NodeOutcome, bool]]:
    """The well-formed record frames of one process's channel, in order: the target's key, the
    call, its outcome and whether the test file made it itself."""
    prefix = f"{nonce} ".encode()
    out = []
    for line in channel[:CHANNEL_CAP].split(b"\n"):
        read = read_frame(line, prefix)
        frame = cast("dict[str, Any]", read)  # a record frame, not one of the wire's
        if frame is None or frame.get("event") != RECORD_EVENT:
            continue
        key, args = frame.get("target"), frame.get("args")
        if type(key) is not int or not 0 <= key < n_targets or type(args) is not list:
            continue
        try:
            this = js.decode(frame["this"]) if "this" in frame else None
            call = NodeCall(tuple(js.decode(a) for a in args), this)
        except (ValueError, KeyError, TypeError):
            continue
        visible = frame.get("visible") is True
        out.append((key, call, read_outcome(frame.get("outcome") or {}), visible))
    return out


def replay(
    sandbox: Sandbox,
    tree: Path,
    harvest: Harvest,
    candidate: bytes | None = None,
    settings: NodeSettings | None = None,
) -> tuple[NodeOutcome, ...]:
    """Each recorded call run again through `run_node` (one jailed process per target), on
    `candidate` in place of its target's file when given: on the original, the determinism check
    is that each outcome equals the recorded one."""
    settings = settings or NodeSettings()
    outcomes: dict[int, NodeOutcome] = {}
    for target in dict.fromkeys(r.target for r in harvest.calls):
        picked = [(i, r.call) for i, r in enumerate(harvest.calls) if r.target == target]
        calls = [c for _, c in picked]
        run = run_node(sandbox, tree, target, calls, candidate=candidate, settings=settings)
        outcomes.update((i, o) for (i, _), o in zip(picked, run.outcomes, strict=True))
    return tuple(outcomes[i] for i in range(len(harvest.calls)))


def stable(
    sandbox: Sandbox, tree: Path, harvest: Harvest, runs: Sequence[NodeSettings]
) -> tuple[Recorded, ...]:
    """The recorded calls whose replay on the original gives the recorded outcome under each of
    `runs` (e.g. another seed, a shifted clock): the ones a task can take as golden."""
    kept = [True] * len(harvest.calls)
    for settings in runs:
        again = replay(sandbox, tree, harvest, settings=settings)
        kept = [k and o == r.outcome for k, o, r in zip(kept, again, harvest.calls, strict=True)]
    return tuple(r for k, r in zip(kept, harvest.calls, strict=True) if k)
