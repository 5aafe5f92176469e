"""Run the Node runner (`runner_js/`, Node built-ins only, shipped as source) on one JavaScript
target's inputs inside a sandbox, and read its outcomes as records (the trusted side's adapter).

The runner speaks the Python runner's framing (`wire`: one ``<nonce> <json>`` line per frame on
the channel fd, the same events and statuses), so its channel is read by the same
`frames.read_frame` and `frames.collect_frames`; its job and values differ, since there is no
pickle to send: the job is one JSON object on stdin's first line (the nonce after it, so a warm
jail, `node_warm`, is started with the job alone), the values are the tagged JavaScript values
of `replicate.values.javascript`. The repository's tree is mounted read-only, the runner's
folder beside it; no network; the sandbox's time and memory limits hold. V8 reserves far more
address space than it uses (Node 20 does not start under 1 GB of it), so each process's address
space is capped no lower than `NODE_ADDRESS_SPACE_MB`: where the machine gives no memory cgroup,
that cap is the memory limit a run gets.
"""

from __future__ import annotations

import enum
import json
import os
import secrets
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replicate.errors import ReplicateError
from replicate.jail import node_deps, wire
from replicate.jail.calls import JAIL_ENV, overlaid, shifted_clock_env
from replicate.jail.frames import collect_frames, read_frame
from replicate.jail.typescript import for_files
from replicate.sandbox import (
    CHANNEL_FD,
    Limits,
    Mount,
    Sandbox,
    SandboxRequest,
    SandboxResult,
    system_view,
)
from replicate.scratch import temporary_dir
from replicate.values import javascript as js

RUNNER_DIR = Path(__file__).resolve().parent / "runner_js"
NODE_ENV = {
    **{name: value for name, value in JAIL_ENV.items() if not name.startswith("PYTHON")},
    "NODE_DISABLE_COLORS": "1",
}
MAX_DEPTH = 32
MAX_ITEMS = 100_000
CHANNEL_CAP = 64 * 1024 * 1024
NODE_ADDRESS_SPACE_MB = 2048


class CallKind(enum.Enum):
    FUNCTION = "function"  # the export itself
    STATIC = "static"  # a static method of the exported class
    METHOD = "method"  # an instance method, `this` rebuilt on the class's prototype


@dataclass(frozen=True)
class NodeTarget:
    """What to call: `module` (relative to the tree), the property names from its exports (or
    ES module namespace; from its module-scope binding `scope` when given: a function or class
    the module does not export) to the function or class, and the class's `member` for a
    method."""

    module: str
    export: tuple[str, ...]
    kind: CallKind = CallKind.FUNCTION
    member: str | None = None
    scope: str | None = None


@dataclass(frozen=True)
class NodeCall:
    args: tuple[js.JsValue, ...]
    this: js.JsValue | None = None  # a method's instance


class Status(enum.Enum):
    RETURNED = wire.RETURNED
    RAISED = wire.RAISED
    LOAD_ERROR = wire.LOAD_ERROR  # the input could not be rebuilt in the jail
    RUNNER_ERROR = wire.RUNNER_ERROR  # no well-formed result: the process ended during the call
    TIMEOUT = wire.TIMEOUT
    IMPORT_ERROR = "import_error"  # the module did not load, or has no such function


@dataclass(frozen=True)
class Thrown:
    type: str  # the thrown value's class name (or typeof for a primitive)
    message: str
    rejected: bool = False  # a returned promise's rejection, not a throw


@dataclass(frozen=True)
class NodeOutcome:
    status: Status
    value: js.JsValue | None = None
    thrown: Thrown | None = None
    args: tuple[js.JsValue, ...] = ()  # as they are after the call
    this: js.JsValue | None = None
    detail: str = ""

    @property
    def passed(self) -> bool:
        """Whether the call ended by itself (returned or raised), as a comparable outcome."""
        return self.status in (Status.RETURNED, Status.RAISED)


@dataclass(frozen=True)
class NodeRun:
    outcomes: tuple[NodeOutcome, ...]  # one per call, in order
    exit_code: int | None
    timed_out: bool
    stderr: bytes
    started: bool = True  # the runner read its nonce (before any repository or candidate code)


def node_binary() -> Path:
    """The host's `node`, resolved; a one-line error when there is none."""
    found = shutil.which("node")
    if found is None:
        raise ReplicateError("node is missing: scripts/install.sh installs Debian's nodejs")
    return Path(os.path.realpath(found))


def _node_mounts(node: Path) -> list[Mount]:
    """The Node install, unless the base system already shows it (Debian's /usr/bin/node)."""
    shown = system_view().read_only
    if any(str(node).startswith(p.rstrip("/") + "/") for p in shown):
        return []
    return [Mount.same(str(node.parent.parent))]


def job_for(tree: Path, target: NodeTarget, calls: Sequence[NodeCall]) -> bytes:
    """The first line of the runner's stdin; the run's nonce follows it (see main.cjs), so a
    warm jail can take and parse its job before the candidate and the nonce exist."""
    inputs = []
    for i, call in enumerate(calls):
        item: dict[str, Any] = {"i": i, "args": [js.encode(a) for a in call.args]}
        if call.this is not None:
            item["this"] = js.encode(call.this)
        inputs.append(item)
    job = {
        "module": str(tree / target.module),
        "scope": target.scope,
        "export": list(target.export),
        "kind": target.kind.value,
        "member": target.member,
        "inputs": inputs,
        "max_depth": MAX_DEPTH,
        "max_items": MAX_ITEMS,
        "channel_fd": CHANNEL_FD,
    }
    return json.dumps(job).encode() + b"\n"


@dataclass(frozen=True)
class NodeSettings:
    """How a Node run is held: its wall clock and memory, the seed of `Math.random` (V8's
    `--random-seed`; None: a fresh one each run), and the days its clock is shifted by
    (libfaketime, as Python's second golden run; 0: the true time)."""

    timeout_s: float = 30.0
    memory_mb: int = 1024
    random_seed: int | None = None
    clock_shift_days: int = 0


def node_request(
    tree: Path,
    job: bytes,
    settings: NodeSettings,
    mounts: Sequence[Mount] = (),
    node: Path | None = None,
    script: Sequence[str] | None = None,
    isolated: bool = True,
) -> SandboxRequest:
    """The sandboxed Node process for `job`: `mounts` show the tree (by default, `tree` alone);
    `script` is what node runs (by default the runner, `RUNNER_DIR`'s main.cjs). The tree's
    installed npm dependencies (`node_deps`), when the cache holds them, are mounted read-only
    (`node_deps.mounts`: for `require` on `NODE_PATH`, for `import` at `/node_modules` where the
    sandbox is `isolated`: one that does not isolate shows every path as itself)."""
    binary = node or node_binary()
    script = (str(RUNNER_DIR / "main.cjs"),) if script is None else script
    seed = () if settings.random_seed is None else (f"--random-seed={settings.random_seed}",)
    shift = settings.clock_shift_days
    memory_mb = settings.memory_mb
    deps = node_deps.installed(tree)
    shown = () if deps is None else node_deps.mounts(deps, at_root=isolated)
    on_path = (
        {} if deps is None else {"NODE_PATH": str(deps.modules), node_deps.OWN_ROOT_ENV: str(tree)}
    )
    return SandboxRequest(
        argv=(str(binary), "--no-warnings", *seed, *script),
        env={**NODE_ENV, **on_path, **(shifted_clock_env(shift) if shift else {})},
        cwd=str(tree),
        timeout_s=settings.timeout_s,
        mounts=(
            *_node_mounts(binary),
            Mount.same(str(RUNNER_DIR)),
            *(mounts or (Mount.same(str(tree)),)),
            *shown,
        ),
        stdin=job,
        channel=True,
        limits=Limits(
            memory_mb=memory_mb,
            address_space_mb=max(memory_mb, NODE_ADDRESS_SPACE_MB),
            output_bytes=CHANNEL_CAP,
        ),
    )


def run_node(
    sandbox: Sandbox,
    tree: Path,
    target: NodeTarget,
    calls: Sequence[NodeCall],
    *,
    candidate: bytes | None = None,
    settings: NodeSettings = NodeSettings(),
) -> NodeRun:
    """Call `target` in `tree` on each of `calls` in one jailed Node process; with `candidate`,
    the target's file is those bytes (mounted over it: the original never appears in the
    jail; a copy of the tree without isolation). A TypeScript target's run preloads the
    transpile-only loader (`typescript`)."""
    nonce = secrets.token_hex(16)
    with temporary_dir("replicate-node-") as scratch:
        seen, mounts = overlaid(
            tree.resolve(), target.module, Path(scratch), candidate, sandbox.isolated, "candidate"
        )
        job = job_for(seen, target, calls)
        stdin = job + nonce.encode()
        result = sandbox.run(
            runner_request(seen, target, stdin, settings, mounts, sandbox.isolated)
        )
    return node_run(result, nonce, len(calls))


def runner_request(
    tree: Path,
    target: NodeTarget,
    stdin: bytes,
    settings: NodeSettings,
    mounts: Sequence[Mount],
    isolated: bool = True,
) -> SandboxRequest:
    """The runner's request on `target` in `tree` (shown by `mounts`), `stdin` sent at its
    start, with the TypeScript loader for a TypeScript target: a cold run's and a warm jail's."""
    request = node_request(tree, stdin, settings, mounts, isolated=isolated)
    return for_files(request, [target.module])


def node_run(result: SandboxResult, nonce: str, count: int) -> NodeRun:
    """The run's `count` outcomes read off its channel."""
    prefix = f"{nonce} ".encode()
    parsed = collect_frames(read_frame(line, prefix) for line in result.channel.split(b"\n"))
    outcomes = []
    for i in range(count):
        if parsed.import_error is not None:
            outcomes.append(NodeOutcome(Status.IMPORT_ERROR, detail=parsed.import_error))
        elif i in parsed.outcomes:
            outcomes.append(read_outcome(parsed.outcomes[i]))
        elif result.timed_out:
            outcomes.append(NodeOutcome(Status.TIMEOUT))
        else:
            ended = f"the process ended during the call (exit code {result.exit_code})"
            outcomes.append(NodeOutcome(Status.RUNNER_ERROR, detail=ended))
    return NodeRun(
        tuple(outcomes), result.exit_code, result.timed_out, result.stderr, parsed.started
    )


def read_outcome(outcome: Mapping[str, Any]) -> NodeOutcome:
    """One result frame's outcome as a record; a malformed one is a runner error."""
    try:
        status = Status(outcome["status"])
        args = tuple(js.decode(a) for a in outcome.get("args", []))
        this = js.decode(outcome["this"]) if "this" in outcome else None
        if status is Status.RETURNED:
            return NodeOutcome(status, value=js.decode(outcome["value"]), args=args, this=this)
        if status is Status.RAISED:
            exc = outcome["exc"]
            thrown = Thrown(_text(exc["type"]), _text(exc["msg"]), outcome.get("async") is True)
            return NodeOutcome(status, thrown=thrown, args=args, this=this)
        return NodeOutcome(status, detail=_text(outcome.get("msg", "")))
    except (ValueError, KeyError, TypeError) as exc:
        return NodeOutcome(Status.RUNNER_ERROR, detail=f"a malformed outcome: {exc}")


def _text(value: Any) -> str:
    if type(value) is not str:
        raise TypeError("not a string")
    return value


def call_json(call: NodeCall) -> dict[str, Any]:
    """A call as a batch stores it (`CallInput.node_call`): its tagged arguments and `this`."""
    item: dict[str, Any] = {"args": [js.encode(a) for a in call.args]}
    if call.this is not None:
        item["this"] = js.encode(call.this)
    return item


def read_call(item: Mapping[str, Any]) -> NodeCall:
    """A stored call read back; ValueError when it is malformed."""
    try:
        args = tuple(js.decode(a) for a in item["args"])
        this = js.decode(item["this"]) if "this" in item else None
    except (KeyError, TypeError) as exc:
        raise ValueError(f"a malformed call: {exc}") from None
    return NodeCall(args, this)


def outcome_json(outcome: NodeOutcome) -> dict[str, Any]:
    """An outcome in the runner's form (what `read_outcome` reads back), as a batch stores it."""
    item: dict[str, Any] = {"status": outcome.status.value}
    if outcome.status is Status.RETURNED and outcome.value is not None:
        item["value"] = js.encode(outcome.value)
    if outcome.thrown is not None:
        item["exc"] = {"type": outcome.thrown.type, "msg": outcome.thrown.message}
        if outcome.thrown.rejected:
            item["async"] = True
    item["args"] = [js.encode(a) for a in outcome.args]
    if outcome.this is not None:
        item["this"] = js.encode(outcome.this)
    if outcome.detail:
        item["msg"] = outcome.detail
    return item
