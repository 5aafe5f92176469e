"""Run the in-jail runner on one target's inputs inside a sandbox (the trusted side's adapter).

The runner (the package replicate/jail/runner/, stdlib only) and the wire module it loads from
beside it (replicate/jail/wire.py) are mounted read-only into the sandbox, and the runner is
started with the repository environment's interpreter as `python -P -s -S -B
runner/__main__.py`: no user or environment site-packages, no script directory on sys.path, no
bytecode written.  (`-I` would also imply `-E`, which ignores PYTHONHASHSEED; the sandbox's
environment is exact anyway.)  The repository tree is mounted read-only; when grading a
candidate, the candidate's file is mounted over the target's file, so the original never appears
in the jail.
"""

from __future__ import annotations

import functools
import glob
import json
import os
import secrets
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from replicate import confined
from replicate.core import CallInput, DropReason, GradingSettings, Target
from replicate.jail import runner as runner_module
from replicate.jail import wire
from replicate.jail.by_value_module import module_file, module_folder, needs_module
from replicate.jail.bytecode import bytecode_table, compiled_runner
from replicate.jail.calltime import CallClock, LiveFrames, timed_frames
from replicate.jail.frames import ParsedRun, collect_frames
from replicate.jail.runner.base import wire_beside
from replicate.jail.warm import RequestFor, WarmPool
from replicate.sandbox import (
    Limits,
    Mount,
    Sandbox,
    SandboxRequest,
    SandboxResult,
    StopWhen,
)
from replicate.scratch import temporary_dir

RUNNER_PATH = Path(runner_module.__file__).resolve().parent / "__main__.py"  # the jail starts it
CHANNEL_CAP = 64 * 1024 * 1024  # results of one run; each value is capped by its settings
# Given a result frame: is the run over? (see `run_calls`)
Until = Callable[[wire.Frame], bool]

JAIL_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "TZ": "UTC",
    "LC_ALL": "C.UTF-8",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONIOENCODING": "utf-8",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}


@functools.cache
def faketime_library() -> str | None:
    """libfaketime (Debian: libfaketime), which shifts the wall clock of one process tree."""
    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))
    return found[0] if found else None


def shifted_clock_env(days: int) -> dict[str, str]:
    """Variables that move wall-clock time (time.time, datetime.now) `days` ahead; monotonic
    clocks stay real so timeouts and timings hold. Empty when libfaketime is missing."""
    library = faketime_library()
    if library is None:
        return {}
    return {
        "LD_PRELOAD": library,
        "FAKETIME": f"+{days}d",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        "FAKETIME_DONT_RESET": "1",
    }


@dataclass(frozen=True)
class RepoContext:
    """Everything the jail needs of a repository: its tree, import roots and environment."""

    tree: Path
    source_roots: tuple[str, ...]
    extra_paths: tuple[str, ...]
    meta: Path | None
    python: Path
    env_root: Path
    site_packages: Path
    cache: Path | None = None  # where compiled bytecode is kept (replicate.jail.bytecode)
    # the gen-time speed-ups (the compiled runner, warm pools that start no spare); off only to
    # measure against them (`replicate gen --cold`)
    speedups: bool = True

    def bytecode(self, tree: Path, target: Target) -> tuple[Path, ...]:
        """The compiled-code tables for a jail running `target` of `tree` (only the snapshot's
        own tree: a copy made for one run is not worth compiling)."""
        if self.cache is None or tree != self.tree:
            return ()
        return bytecode_table(self.cache, tree, self.python, target.path)

    def runner(self) -> Path:
        """The file the jail starts: the runner compiled by the environment's interpreter, or
        its source when there is no cache (or without `speedups`)."""
        if self.cache is None or not self.speedups:
            return RUNNER_PATH
        return compiled_runner(self.cache, self.python, RUNNER_PATH) or RUNNER_PATH

    def sys_path(self, tree: Path) -> list[str]:
        roots = [str((tree / r).resolve()) for r in (*self.source_roots, *self.extra_paths)]
        if self.meta is not None:
            roots.append(str(self.meta))
        return roots

    def mounts(self) -> list[Mount]:
        runner = str(self.runner())
        package = os.path.dirname(runner)  # the runner's parts, beside the file it starts
        out = [Mount.same(str(self.env_root)), Mount.same(package), Mount.same(wire_beside(runner))]
        by_value = module_folder()
        if by_value is not None:  # read-only: the runner loads it only for a job that needs it
            out.append(Mount.same(by_value))
        if self.meta is not None:
            out.append(Mount.same(str(self.meta)))
        return out


@dataclass(frozen=True)
class JailRun:
    parsed: ParsedRun
    result: SandboxResult

    @property
    def started(self) -> bool:
        return self.parsed.started

    def infra_problem(self) -> str | None:
        """Why this run says nothing about the candidate, or None if it does."""
        if self.parsed.started:
            return None
        tail = self.result.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
        detail = tail[0][:200] if tail else f"exit code {self.result.exit_code}"
        return f"{DropReason.RUNNER_DID_NOT_START}: {detail}"


def job_dict(
    target: Target, inputs: Sequence[CallInput], settings: GradingSettings, encode_inputs: bool
) -> wire.Job:
    """The runner's job for calling `target` on `inputs` (its nonce apart)."""
    return {
        "module": target.module,
        "qualname": target.qualname,
        "kind": target.kind,
        "inputs": [{"i": item.index, "pickle_b64": item.pickle_b64} for item in inputs],
        "call_timeout_s": settings.call_timeout_s,
        "max_items": settings.max_items,
        "max_arg_items": settings.arg_items,
        "arg_reads": settings.arg_reads,
        "max_depth": settings.max_depth,
        "max_bytes": settings.max_bytes,
        "channel_fd": 3,
        "encode_inputs": encode_inputs,
        "by_value": needs_module(item.pickle_b64 for item in inputs),
    }


def job_line(
    target: Target, inputs: Sequence[CallInput], settings: GradingSettings, encode_inputs: bool
) -> bytes:
    """The first line of the runner's stdin; the run's nonce follows it (see runner.main), so a
    warm jail can take and parse its job before the candidate and the nonce exist."""
    return json.dumps(job_dict(target, inputs, settings, encode_inputs)).encode() + b"\n"


def _setup(ctx: RepoContext, tree: Path, bytecode: tuple[Path, ...]) -> str:
    """The runner's setup argument: what it prepares before its job arrives."""
    setup: wire.Setup = {
        "sys_path": ctx.sys_path(tree),
        "site_dirs": [str(ctx.site_packages)],
        "bytecode": [str(table) for table in bytecode],
        "by_value": module_file(),
    }
    return json.dumps(setup)


@dataclass(frozen=True)
class RunPlan:
    """What one jailed run is, apart from its inputs and the candidate's bytes (or the
    programs of a series)."""

    ctx: RepoContext
    target: Target
    settings: GradingSettings
    hash_seed: int
    clock_shift_days: int

    def request(
        self,
        tree: Path,
        mounts: Sequence[Mount],
        bytecode: tuple[Path, ...],
        stdin: bytes = b"",
    ) -> SandboxRequest:
        # read-only, and only the tables without this target's code (see bytecode.py)
        mounts = [*(Mount.same(str(table)) for table in bytecode), *mounts]
        return SandboxRequest(
            argv=(
                *(str(self.ctx.python), "-P", "-s", "-S", "-B", str(self.ctx.runner())),
                _setup(self.ctx, tree, bytecode),
            ),
            env={
                **JAIL_ENV,
                "PYTHONHASHSEED": str(self.hash_seed),
                **(shifted_clock_env(self.clock_shift_days) if self.clock_shift_days else {}),
            },
            cwd=str(tree),
            timeout_s=self.settings.total_timeout_s,
            mounts=tuple(mounts),
            stdin=stdin,
            channel=True,
            limits=Limits(
                memory_mb=self.settings.memory_mb,
                address_space_mb=self.settings.memory_mb,
                output_bytes=CHANNEL_CAP,
            ),
        )

    def warm_key(self, job: bytes) -> tuple[object, ...]:
        """What a warm jail was started for: the same tree and limits, and the same job (sent
        to it at its start)."""
        return (
            job,
            str(self.ctx.tree),
            str(self.ctx.env_root),
            self.ctx.extra_paths,
            self.target.path,
            self.hash_seed,
            self.clock_shift_days,
            self.settings.memory_mb,
        )


def run_calls(
    ctx: RepoContext,
    target: Target,
    inputs: Sequence[CallInput],
    sandbox: Sandbox,
    settings: GradingSettings,
    *,
    override: bytes | None = None,
    hash_seed: int = 0,
    encode_inputs: bool = False,
    clock_shift_days: int = 0,
    pool: WarmPool | None = None,
    until: Until | None = None,
) -> JailRun:
    """Call the target on every input in a fresh jailed process; `override` replaces its file.

    With a warm `pool` (and an isolating sandbox), the jail was started ahead of time; there,
    `until` sees each input's outcome as it arrives, and once it returns True the run is ended
    (the inputs after it get no outcome).  Elsewhere `until` is ignored: every input runs.
    """
    nonce = secrets.token_hex(16)
    run = RunPlan(ctx, target, settings, hash_seed, clock_shift_days)
    if pool is not None and override is not None and sandbox.isolated:
        slot = pool.take(*_warm_job(run, inputs, encode_inputs))
        try:
            live = LiveFrames(nonce, _clock(inputs, settings))
            stop = _stop_when(live, until)
            result = slot.run(override, nonce.encode(), settings.total_timeout_s, stop)
            return finished_run(result, nonce, inputs, settings, live)
        finally:
            slot.replace()
    with temporary_dir("replicate-jail-") as scratch:
        tree, mounts = _view(ctx, target, Path(scratch), override, sandbox.isolated)
        bytecode = ctx.bytecode(tree, target)
        stdin = job_line(target, inputs, settings, encode_inputs) + nonce.encode()
        result = sandbox.run(run.request(tree, mounts, bytecode, stdin))
    return finished_run(result, nonce, inputs, settings)


def _warm_job(
    run: RunPlan, inputs: Sequence[CallInput], encode_inputs: bool
) -> tuple[tuple[object, ...], RequestFor]:
    """The key of a warm jail for this run and how to start one, given its candidate file."""
    ctx, target = run.ctx, run.target
    bytecode = ctx.bytecode(ctx.tree, target)
    job = job_line(target, inputs, run.settings, encode_inputs)
    inside = str(ctx.tree / target.path)
    base = [*ctx.mounts(), Mount.same(str(ctx.tree))]

    def request_for(candidate: Path) -> SandboxRequest:
        return run.request(ctx.tree, [*base, Mount(str(candidate), inside)], bytecode, job)

    return run.warm_key(job), request_for


def prewarm(
    ctx: RepoContext,
    target: Target,
    inputs: Sequence[CallInput],
    settings: GradingSettings,
    pool: WarmPool,
    *,
    hash_seed: int = 0,
) -> None:
    """Start (in the background) the warm jails a later `run_calls(..., pool=pool)` of a
    candidate for this target will take, so the process start is off the grade's path."""
    run = RunPlan(ctx, target, settings, hash_seed, 0)
    pool.fill(*_warm_job(run, inputs, False))


def _stop_when(live: LiveFrames, until: Until | None) -> StopWhen:
    """The channel-level test that ends a warm run, parsing the channel as it arrives: at the
    runner's ``done`` frame (its last write: killing the jail there saves waiting for the
    process and its namespaces to wind down), or once `until` holds for a ``result`` frame."""

    def stop(chunk: bytes, at: float) -> bool:
        for frame in live.feed(chunk, at):
            event = frame.get("event") if frame is not None else None
            if event == wire.DONE:
                return True
            if event == wire.RESULT and until is not None and frame is not None and until(frame):
                return True
        return False

    return stop


def finished_run(
    result: SandboxResult,
    nonce: str,
    inputs: Sequence[CallInput],
    settings: GradingSettings,
    live: LiveFrames | None = None,
) -> JailRun:
    """Parse the channel once every result that reached the host too late is a timeout."""
    arrivals = result.channel_arrivals
    if live is not None:
        frames = live.result(result.channel, arrivals)
    else:
        frames = timed_frames(result.channel, arrivals, nonce, _clock(inputs, settings))
    return JailRun(parsed=collect_frames(frames), result=result)


def _clock(inputs: Sequence[CallInput], settings: GradingSettings) -> CallClock:
    return CallClock(tuple(item.index for item in inputs), settings.call_timeout_s)


def _view(
    ctx: RepoContext, target: Target, scratch: Path, override: bytes | None, isolated: bool
) -> tuple[Path, list[Mount]]:
    """The tree the jail sees and the mounts that make it, with the override in place."""
    tree, shown = overlaid(ctx.tree, target.path, scratch, override, isolated, "candidate.py")
    return tree, [*ctx.mounts(), *shown]


def overlaid(
    tree: Path, path: str, scratch: Path, override: bytes | None, isolated: bool, name: str
) -> tuple[Path, list[Mount]]:
    """The tree a jail sees and the mounts that show it, the file at `path` replaced by
    `override` when given: mounted over it (written to `scratch` as `name`), so the original
    never appears in the jail; without isolation (the plain backend), a copy of the tree."""
    if override is None:
        return tree, [Mount.same(str(tree))]
    if isolated:
        candidate = scratch / name
        candidate.write_bytes(override)
        return tree, [Mount.same(str(tree)), Mount(str(candidate), str(tree / path))]
    copy = scratch / "tree"
    shutil.copytree(tree, copy, symlinks=True)
    confined.write_bytes(copy, path, override)
    return copy, [Mount.same(str(copy))]
