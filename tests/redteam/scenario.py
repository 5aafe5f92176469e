"""Running red-team attacks: once outside any sandbox against the naive grader, and in batches
through the real `replicate run` (docs/design.md §5: a test of a defence first shows the attack
works without it).

An `Attack` is one agent script (tests/redteam/agents/) with its arguments and the task it runs
on.  `run_group` runs many attacks in ONE `replicate run`: the agent command dispatches on
`$REPLICATE_TASK_ID`, so each attack needs its own task within a group.  Every attack gets a
marker (the last argument of its agent) that its processes carry in their command line or name,
so leftovers can be found in /proc afterwards.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replicate.agents.workspace import make_workspace
from replicate.batch.store import Batch, LoadedTask
from replicate.cache import cache_root
from replicate.grading.compare import Mismatch
from replicate.grading.reward import normalise, score_matches
from replicate.jail.calls import RepoContext
from replicate.jail.calltime import SLACK_S
from replicate.jail.context import context_for
from replicate.sandbox.docker import LABEL
from tests.redteam.naive import (
    NaiveOptions,
    NaiveResult,
    NaiveTask,
    build_job,
    grade_target,
    grade_tree,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
# The committed bundled batch (specs/ and reference_impls/ at the root, minted from
# corpus/samplelib), or another batch of samplelib named by REDTEAM_TASKS.
BATCH = Path(os.environ.get("REDTEAM_TASKS") or REPO_ROOT)
AGENTS = Path(__file__).resolve().parent / "agents"


@dataclass(frozen=True)
class Attack:
    """One cheating agent on one task; `max_reward` is what it may earn from our grader."""

    name: str
    item: int  # the catalogue item (docs/design.md §5)
    symbol: str
    agent: str  # script in tests/redteam/agents/
    args: tuple[str, ...] = ()
    naive_min: float = 1.0  # the naive grader must give at least this
    max_reward: float = 0.0
    hole: str | None = None  # why our grader does not hold yet: the test is a strict xfail
    naive_tree: str = "target"  # or "workspace": grade in the agent's workspace (SWE-style)
    naive: NaiveOptions = field(default_factory=NaiveOptions)
    baseline: tuple[str, ...] | None = None  # agent args without the cheat: naive gives ~0
    marker: str = field(default_factory=lambda: "rt" + secrets.token_hex(5))

    def host(self) -> Attack:
        """This attack as run outside any sandbox (its own marker: runs may go on meanwhile)."""
        return dataclasses.replace(self, marker=self.marker + "h")

    def in_run(self, backend: str) -> Attack:
        """This attack in a `replicate run` on `backend` (its own marker: the runs of the two
        backends go on at the same time)."""
        return dataclasses.replace(self, marker=self.marker + backend[0])

    def command(self, agents: Path = AGENTS) -> str:
        argv = ["python", str(agents / self.agent), *self.args, self.marker]
        return " ".join(shlex.quote(a) for a in argv)


CONTROL = Attack("control", 0, "samplelib.numeric.clamp", "control.py", max_reward=1.0)
TOTAL_LIMIT = "the run hit its time limit"  # in a verdict's reason


SLOW_CALLS = 3  # how many of its first calls a slow-but-correct candidate sleeps on


def slow_seconds(symbol: str) -> str:
    """How long a slow-but-correct candidate sleeps on each slow call in the sandbox: past the
    task's per-call limit plus the host clock's slack, so only a per-call limit that holds stops
    it."""
    return f"{task(symbol).hidden.grading.call_timeout_s + SLACK_S + 0.5:.2f}"


def slow_args(symbol: str, mode: str) -> tuple[str, ...]:
    """A slow agent's arguments: its mode, the sleep and how many first calls sleep."""
    return (mode, slow_seconds(symbol), str(SLOW_CALLS))


def late_reward(symbol: str, lost: int = SLOW_CALLS) -> float:
    """The reward of a correct candidate whose first `lost` calls (the runner calls the hidden
    inputs in the task's order) count as mismatches: what a slow one may honestly earn."""
    loaded = task(symbol)
    late = Mismatch("timeout", "", "", "")
    found = [late if n < lost else None for n in range(len(loaded.inputs))]
    raw = score_matches(loaded.inputs, found, loaded.hidden.grading).reward
    base = loaded.hidden.baseline.raw_reward if loaded.hidden.baseline else None
    return round(normalise(raw, base), 6)


def naive_late(attack: Attack) -> float:
    """The naive grader's score (the plain fraction) for a correct candidate whose slow calls
    its limit stopped."""
    calls = len(task(attack.symbol).inputs)
    return (calls - SLOW_CALLS) / calls


def check_per_call_limit(group: GroupRun, attack: Attack) -> None:
    """The slow calls of a correct candidate were stopped one by one and counted as timeouts,
    the fast calls all counted, and nothing else: exactly `SLOW_CALLS` inputs lost (the first
    of them, the counterexample, a timeout), the reward that leaves (< 1), and not the run's
    total limit (which would stop the candidate anyway, proving nothing)."""
    loaded = task(attack.symbol)
    asleep = SLOW_CALLS * float(slow_seconds(attack.symbol))
    assert asleep < 0.6 * loaded.hidden.grading.total_timeout_s, (
        f"{attack.name}: {SLOW_CALLS} calls x {slow_seconds(attack.symbol)} s do not fit in "
        f"the run's {loaded.hidden.grading.total_timeout_s} s"
    )
    row = group.row(attack)
    verdict = row["verdict"]
    reason = str(row["reason"])
    lost = sum(c["total"] - c["matched"] for c in verdict["counts"])
    example = verdict.get("counterexample") or {}
    expected = late_reward(attack.symbol)
    problems = []
    if TOTAL_LIMIT in reason:
        problems.append(f"stopped by the total limit only: {reason}")
    if lost != SLOW_CALLS:
        problems.append(f"{lost} inputs lost, not the {SLOW_CALLS} slow calls: {reason}")
    if example.get("index") != loaded.inputs[0].index or example.get("detail") != "timeout":
        problems.append(f"the first slow call is not a timeout: {example}")
    if row["reward"] is None or abs(row["reward"] - expected) > 1e-6 or expected >= 1.0:
        problems.append(
            f"reward {row['reward']}, a correct candidate losing its slow calls earns {expected}"
        )
    if problems:
        raise DefenceMissing(f"{attack.name} on {group.backend}: " + "; ".join(problems))


# ---------------------------------------------------------------- tasks


@functools.cache
def batch() -> Batch:
    return Batch.open(BATCH)


@functools.cache
def task(symbol: str) -> LoadedTask:
    return batch().load(batch().resolve(symbol))


@functools.cache
def context(symbol: str) -> RepoContext:
    return context_for(task(symbol).repo, cache_root())


def naive_task(symbol: str) -> NaiveTask:
    loaded, ctx = task(symbol), context(symbol)
    target = loaded.hidden.target
    return NaiveTask(
        module=target.module,
        qualname=target.qualname,
        target_path=target.path,
        roots=(*ctx.source_roots, *ctx.extra_paths),
        call_timeout=loaded.hidden.grading.call_timeout_s,
    )


@functools.cache
def naive_job(symbol: str, folder: Path) -> Path:
    """The naive grader's job file (expected outcomes of the original), built once per task."""
    out = folder / f"{task(symbol).id}.job.json"
    return build_job(naive_task(symbol), task(symbol).repo.tree, task(symbol).inputs, out)


# ---------------------------------------------------------------- outside any sandbox


@dataclass(frozen=True)
class HostAgentRun:
    workspace: Path
    exit_code: int | None
    timed_out: bool
    output: bytes


def agent_env(symbol: str, workspace: Path, home: Path, extra: Mapping[str, str]) -> dict[str, str]:
    """The agent protocol's environment (as `replicate run` sets it), on the host."""
    loaded, ctx = task(symbol), context(symbol)
    return {
        "PATH": f"{ctx.env_root}/bin:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONPATH": os.pathsep.join(ctx.sys_path(workspace)),
        "PYTHONDONTWRITEBYTECODE": "1",
        "REPLICATE_TASK_ID": loaded.id,
        "REPLICATE_WORKSPACE": str(workspace),
        "REPLICATE_PROMPT": str(workspace / "TASK.md"),
        "REPLICATE_TARGET_FILE": loaded.hidden.target.path,
        "REPLICATE_TARGET": loaded.hidden.target.symbol,
        **extra,
    }


def run_agent_on_host(
    attack: Attack,
    root: Path,
    *,
    workspace: Path | None = None,
    timeout_s: float = 120.0,
    env: Mapping[str, str] | None = None,
    args: Sequence[str] | None = None,
) -> HostAgentRun:
    """Run the attack's agent with no sandbox (bounded: REDTEAM_SAFE=1), like a naive harness:
    `sh -c CMD` with a timeout that kills only the shell."""
    ws = workspace or make_workspace(task(attack.symbol), root / "workspace")
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    variant = (
        attack.host() if args is None else dataclasses.replace(attack.host(), args=tuple(args))
    )
    log = root / "agent.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", variant.command()],
            cwd=ws,
            env=agent_env(attack.symbol, ws, home, {"REDTEAM_SAFE": "1", **(env or {})}),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            code: int | None = proc.wait(timeout=timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code, timed_out = None, True
    return HostAgentRun(ws, code, timed_out, log.read_bytes())


def naive_grade(
    attack: Attack, workspace: Path, jobs: Path, options: NaiveOptions | None = None
) -> NaiveResult:
    """The naive grader on what the agent left: its target file dropped into a copy of the
    pristine tree, or (`naive_tree="workspace"`) the whole workspace as it is."""
    options = options or attack.naive
    job = naive_job(attack.symbol, jobs)
    if attack.naive_tree == "workspace":
        return grade_tree(naive_task(attack.symbol), workspace, job, options)
    return grade_target(
        naive_task(attack.symbol), task(attack.symbol).repo.tree, workspace, job, options
    )


def demonstrate(
    attack: Attack,
    root: Path,
    jobs: Path,
    *,
    workspace: Path | None = None,
    env: Mapping[str, str] | None = None,
    args: Sequence[str] | None = None,
) -> NaiveResult:
    """Run the agent outside any sandbox, then grade what it left with the naive grader."""
    ran = run_agent_on_host(attack, root, workspace=workspace, env=env, args=args)
    assert ran.exit_code == 0, (
        f"{attack.name}: the agent failed on the host: {ran.output[-2000:]!r}"
    )
    options = attack.naive
    home = {"HOME": str(root / "home")}
    options = dataclasses.replace(options, env={**home, **options.env})
    try:
        return naive_grade(attack, ran.workspace, jobs, options)
    finally:
        kill_marked(attack.host().marker)


# ---------------------------------------------------------------- through `replicate run`


@dataclass(frozen=True)
class GroupRun:
    backend: str
    exit_code: int
    stderr: str
    duration_s: float
    rows: Mapping[str, Mapping[str, Any]]  # by task id, from results.jsonl (the last row wins)
    row_count: int
    leftovers: Mapping[str, tuple[int, ...]]  # attack's marker -> pids still alive after the run
    out: Path
    tasks: int
    containers: tuple[str, ...] = ()  # docker: containers the run left behind

    def row(self, attack: Attack) -> Mapping[str, Any]:
        ident = task(attack.symbol).id
        assert ident in self.rows, f"no result row for {attack.name}: {self.stderr[-2000:]}"
        return self.rows[ident]


def dispatch_command(attacks: Iterable[Attack]) -> str:
    """One shell command for the whole group: a `case` on $REPLICATE_TASK_ID."""
    branches = [f"{task(a.symbol).id}) exec {a.command()} ;;" for a in attacks]
    return 'case "$REPLICATE_TASK_ID" in ' + " ".join(branches) + " *) exit 3 ;; esac"


def run_group(
    attacks: Sequence[Attack],
    backend: str,
    out: Path,
    *,
    timeout_s: float,
    workers: int = 2,
    env: Mapping[str, str] | None = None,
) -> GroupRun:
    runs = [attack.in_run(backend) for attack in attacks]
    ids = [task(a.symbol).id for a in attacks]
    assert len(set(ids)) == len(ids), "each attack of a group needs its own task"
    argv = [sys.executable, "-m", "replicate", "run", "--tasks", str(BATCH)]
    argv += ["--agent", dispatch_command(runs), "--out", str(out), "--json"]
    argv += ["--workers", str(workers), "--timeout", str(timeout_s), "--sandbox", backend]
    argv += ["--mount", str(AGENTS)]
    for name in env or {}:
        argv += ["--env", name]
    for ident in ids:
        argv += ["--task", ident]
    started = time.monotonic()
    with subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    ) as proc:
        _, stderr = proc.communicate(timeout=900)
    duration = time.monotonic() - started
    rows, count = _rows(out / "results.jsonl")
    left = {a.marker: wait_for_no_leftovers(r.marker) for a, r in zip(attacks, runs, strict=True)}
    for attack in runs:
        kill_marked(attack.marker)
    containers = containers_of(proc.pid) if backend == "docker" else ()
    return GroupRun(
        backend, proc.returncode, stderr, duration, rows, count, left, out, len(ids), containers
    )


class DefenceMissing(AssertionError):
    """Our grader let an attack through or fell over (what a strict xfail of a known hole
    expects; a broken demonstration against the naive grader is a plain AssertionError)."""


def check_defended(group: GroupRun, attack: Attack, control: Attack = CONTROL) -> None:
    """The attack earned at most its allowance, the run finished, the grader stayed up (the
    control task still scores 1.0), no row was forged and nothing of the attack is running."""
    problems = []
    if group.exit_code != 0:
        problems.append(f"replicate run exited {group.exit_code}: {group.stderr[-1500:]}")
    row = group.rows.get(task(attack.symbol).id)
    if row is None:
        problems.append("no result row")
    else:
        if row["status"] not in ("graded", "violation"):
            problems.append(f"status {row['status']} ({row['reason']})")
        if row["reward"] is None or row["reward"] > attack.max_reward + 1e-9:
            problems.append(f"earned {row['reward']} > {attack.max_reward} ({row['reason']})")
    if group.containers:
        problems.append(f"containers left behind by the run: {group.containers}")
    if group.leftovers.get(attack.marker):
        problems.append(f"processes left running after the run: {group.leftovers[attack.marker]}")
    control_row = group.rows.get(task(control.symbol).id)
    if control_row is None or control_row["reward"] != 1.0:
        problems.append(f"the control task did not score 1.0: {control_row}")
    if group.row_count != group.tasks:
        problems.append(f"results.jsonl holds {group.row_count} rows for {group.tasks} tasks")
    if problems:
        where = f"{attack.name} (catalogue item {attack.item}) on {group.backend}"
        raise DefenceMissing(f"{where}: " + "; ".join(problems))


def check_graded_twice(group: GroupRun, attack: Attack) -> None:
    """A nondeterministic candidate was held down by the second grading, not by luck: the
    verdict says so, and its first grading alone would have paid more than the allowance."""
    row = group.row(attack)
    loaded = task(attack.symbol)
    raw = row["verdict"].get("raw_reward")
    base = loaded.hidden.baseline.raw_reward if loaded.hidden.baseline else None
    once = None if raw is None else normalise(raw, base)
    if not str(row["reason"]).startswith("nondeterministic:"):
        raise DefenceMissing(f"{attack.name} on {group.backend}: not caught: {row['reason']}")
    assert once is not None and once > attack.max_reward, (
        f"{attack.name}: one grading pays only {once} (raw {raw}): the attack proves nothing"
    )


def _rows(path: Path) -> tuple[dict[str, dict[str, Any]], int]:
    if not path.is_file():
        return {}, 0
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return {row["task_id"]: row for row in lines}, len(lines)


# ---------------------------------------------------------------- leftover processes


def marked_pids(marker: str) -> tuple[int, ...]:
    """Processes whose command line or name carries `marker` (never this process)."""
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        for name in ("cmdline", "comm"):
            try:
                data = Path("/proc", entry, name).read_bytes()
            except OSError:
                continue
            if needle in data:
                found.append(int(entry))
                break
    return tuple(found)


def containers_of(pid: int) -> tuple[str, ...]:
    """Sandbox containers (any state) created by the process `pid`: labelled `pid:start`."""
    import docker

    client = docker.from_env()
    try:
        # the low-level list: `containers.list` inspects each container after listing, and one
        # another test's sandbox removes in between (its process gone) is a NotFound
        found = client.api.containers(all=True, filters={"label": LABEL})
        return tuple(
            c["Names"][0].lstrip("/")
            for c in found
            if (c.get("Labels") or {}).get(LABEL, "").partition(":")[0] == str(pid)
        )
    finally:
        client.close()


def wait_for_no_leftovers(marker: str, wait_s: float = 5.0) -> tuple[int, ...]:
    deadline = time.monotonic() + wait_s
    while True:
        pids = marked_pids(marker)
        if not pids or time.monotonic() > deadline:
            return pids
        time.sleep(0.1)


def kill_marked(marker: str) -> None:
    """Kill what a naive (unsandboxed) demonstration left running: processes we started."""
    for _ in range(50):
        pids = marked_pids(marker)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def fresh_dir(root: Path, name: str) -> Path:
    path = root / name
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path
