"""Several programs of our own on one target's inputs in one jail, a forked child for each.

Most of what grading a mutant costs is starting its jail: bubblewrap and its cgroup, the
interpreter and the runner's standard-library imports, ~50 ms of CPU before the first call,
against a few ms for the calls of a typical target. At gen time a target has a dozen or more
mutants to grade, and a mutant is the repository's code changed by us, never a candidate's.
So one jail runs them one after the other: the runner does its setup once, then for each
program copies it over the target's file (bound writable for this) and forks a child that runs
the job exactly as a fresh runner would (`runner.run_series`), with the program's own nonce.
After each child has exited, or been killed at the program's time limit, the runner writes an
``exited`` frame under the series' nonce; the host cuts the channel there, and each program's
part is read as a run of its own (the per-call limit held on the host's clock included).

What the programs share is the jail, not memory: each child starts from the runner's state
before any repository code ran, as a fresh jail would. Files a program writes in the jail's
/tmp are seen by the next one, and a process a program leaves behind lives on beside the next
child. That is why a series is never used for a candidate (`run`, `grade`, `serve` grade each
in a jail of its own) and why `--cold` turns it off. What a series cannot give (a program with
no ``exited`` frame: the jail died or ran out of time) comes back as None, and the caller runs
that program in a jail of its own.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import secrets
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from replicate.core import CallInput, GradingSettings, Target
from replicate.executors import map_in_order
from replicate.jail import wire
from replicate.jail.calls import JailRun, RepoContext, RunPlan, finished_run, job_line
from replicate.jail.frames import read_frame
from replicate.jail.sandbox.base import Arrival, Mount, Sandbox, SandboxResult
from replicate.scratch import temporary_dir

START_S = 30.0  # the series' own start and setup, beyond its programs' limits
REAP_S = 2.0  # per program: killing a child at its limit and writing its frame


def forks_series(sandbox: Sandbox, ctx: RepoContext) -> bool:
    """Whether programs of ours run as a series in `sandbox` (bubblewrap, with the speed-ups)."""
    return ctx.speedups and sandbox.isolated and getattr(sandbox, "name", "") == "local"


def run_series(
    ctx: RepoContext,
    target: Target,
    inputs: Sequence[CallInput],
    sandbox: Sandbox,
    settings: GradingSettings,
    programs: Sequence[bytes],
    *,
    hash_seed: int = 0,
    until_timeout: bool = False,
) -> list[JailRun | None]:
    """Each program's run on `inputs` (its bytes replace the target's file), in one jail; None
    for a program the series did not finish (run it alone).  With `until_timeout`, a program's
    run ends at its first timeout (a mutant that loops is killed by then: one call's limit)."""
    if not programs:
        return []
    nonces = [secrets.token_hex(16) for _ in programs]
    own = secrets.token_hex(16)
    inside = str(ctx.tree / target.path)
    with temporary_dir("replicate-series-") as scratch:
        folder = Path(scratch) / "programs"
        folder.mkdir()
        files = []
        for k, program in enumerate(programs):
            (folder / f"{k}.py").write_bytes(program)
            files.append(str(folder / f"{k}.py"))
        current = Path(scratch) / "current.py"
        current.write_bytes(b"")
        series: wire.Series = {
            "programs": files,
            "nonces": nonces,
            "file": inside,
            "timeout_s": settings.total_timeout_s,
            "until_timeout": until_timeout,
            "nonce": own,
        }
        plan = RunPlan(ctx, target, settings, hash_seed, 0)
        mounts = [
            *ctx.mounts(),
            Mount.same(str(ctx.tree)),
            Mount(str(current), inside, writable=True),
            Mount.same(str(folder)),
        ]
        stdin = job_line(target, inputs, settings, False, series)
        request = plan.request(ctx.tree, mounts, ctx.bytecode(ctx.tree, target), stdin)
        limit = START_S + len(programs) * (settings.total_timeout_s + REAP_S)
        result = sandbox.run(dataclasses.replace(request, timeout_s=limit))
    return split_series(result, nonces, own, inputs, settings)


def run_series_parallel(
    ctx: RepoContext,
    target: Target,
    inputs: Sequence[CallInput],
    sandbox: Sandbox,
    settings: GradingSettings,
    programs: Sequence[bytes],
    *,
    workers: int = 1,
    until_timeout: bool = False,
) -> list[JailRun | None]:
    """`run_series` over `workers` jails at once, the programs cut into that many runs of
    consecutive ones; the runs in the programs' order."""

    def one(part: Sequence[bytes]) -> list[JailRun | None]:
        return run_series(ctx, target, inputs, sandbox, settings, part, until_timeout=until_timeout)

    parts = [[programs[k] for k in part] for part in _cut(len(programs), workers)]
    if len(parts) <= 1:
        return one(programs)

    with ThreadPoolExecutor(max_workers=len(parts), thread_name_prefix="replicate-series") as pool:
        return [run for runs in map_in_order(pool, one, parts) for run in runs]


def _cut(count: int, workers: int) -> list[range]:
    """`count` programs in at most `workers` runs of consecutive ones, of near-equal sizes."""
    ways = max(1, min(workers, count))
    bounds = [count * n // ways for n in range(ways + 1)]
    return [range(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def split_series(
    result: SandboxResult,
    nonces: Sequence[str],
    own: str,
    inputs: Sequence[CallInput],
    settings: GradingSettings,
) -> list[JailRun | None]:
    """Each program's run, cut from the series' channel at its ``exited`` frame."""
    runs: list[JailRun | None] = [None] * len(nonces)
    prefix = own.encode("ascii") + b" "
    channel, start = result.channel, 0
    for line in re.finditer(b"(?m)^" + re.escape(prefix) + b".*$", channel):
        frame = read_frame(line.group(0), prefix) or {}
        k, status, timed_out = frame.get("k"), frame.get("status"), frame.get("timed_out")
        seconds = frame.get("s")
        if frame.get("event") != wire.EXITED or type(k) is not int or type(status) is not int:
            continue
        if not 0 <= k < len(nonces) or runs[k] is not None:
            continue
        part = dataclasses.replace(
            result,
            exit_code=None if timed_out is True else status,
            timed_out=timed_out is True,
            duration_s=seconds if isinstance(seconds, float) else result.duration_s,
            channel=channel[start : line.start()],
            channel_arrivals=cut_arrivals(result.channel_arrivals, start, line.start()),
        )
        runs[k] = finished_run(part, nonces[k], inputs, settings)
        start = line.end() + 1
    return runs


def cut_arrivals(arrivals: Sequence[Arrival], start: int, end: int) -> tuple[Arrival, ...]:
    """The arrival notes of the channel's bytes `start:end`, counted from `start`."""
    out: list[Arrival] = []
    for total, at in arrivals:
        if total <= start:
            continue
        out.append((min(total, end) - start, at))
        if total >= end:
            break
    return tuple(out)
