"""`replicate run`: for each task, a fresh workspace, the agent in a sandbox, then grading."""

from __future__ import annotations

import difflib
import shutil
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from replicate import GRADER_VERSION, confined, jsonl
from replicate.agents import (
    EXCEEDED,
    Agent,
    AgentConfig,
    AgentOutcome,
    ModelConfig,
    TargetRead,
    make_agent,
    make_workspace,
    read_target,
    release_stale,
    workspace_quota,
)
from replicate.batch import Batch, LoadedTask, choose
from replicate.cache import cache_root
from replicate.core import (
    Band,
    NullProgress,
    Progress,
    ResultRow,
    TaskKind,
    Verdict,
    VerdictStatus,
)
from replicate.executors import get_executor, in_lanes, map_in_order, openers
from replicate.grading import grade_text, is_script_task, prewarm_script, with_repo_tests
from replicate.jail import (
    CandidateSessions,
    Jail,
    RepoContext,
    Sandbox,
    WarmPool,
    WarmStart,
    context_for,
    idle_sessions,
)
from replicate.scoring.results import (
    DONE_STATUSES,
    ResultLog,
    RunIdentity,
    claim_run_dir,
    load_rows,
    locked_run_dir,
    repair_results,
)

AHEAD = 2  # attempts per worker before a target file's first, its sessions are started


@dataclass(frozen=True)
class RunOptions:
    tasks: Path
    out: Path
    agent: AgentConfig
    sandbox_name: str
    workers: int = 1
    task_ids: tuple[str, ...] = ()
    limit: int | None = None
    bands: tuple[Band, ...] = ()  # only tasks of these difficulty bands (all when none)
    max_solve_rate: float | None = None  # only tasks whose recorded solve rate is at most this
    kinds: frozenset[TaskKind] = frozenset()  # only tasks of these task kinds (all when none)
    samples: int = 1
    keep_workspaces: bool = False
    repo_tests: bool = False  # also run the repository's tests of each target (reported only)
    verify: bool = True  # check the batch against its manifest (`--no-verify` skips it)
    model: ModelConfig | None = None  # the model of a built-in agent (`--agent builtin:NAME`)
    warm: bool = True  # grade in jails started while the agent works (`--cold`: on demand)
    executor: str = "local"  # "ray": each attempt a Ray task (`replicate.executors`)
    ray_address: str | None = None


@dataclass(frozen=True)
class RunSummary:
    rows: tuple[ResultRow, ...]
    resumed: int
    symbols: Mapping[str, str]  # task id -> the target's dotted symbol, for display
    torn: int = 0  # lines of an earlier results.jsonl moved aside (cut short by a crash)
    samples: int = 1  # attempts per task (`--samples`)

    @property
    def infra_errors(self) -> int:
        return sum(row.status == "infra_error" for row in self.rows)

    @property
    def mean_reward(self) -> float:
        rewards = [r.reward for r in self.rows if r.reward is not None]
        return sum(rewards) / len(rewards) if rewards else 0.0


class _Contexts:
    """One environment per repository snapshot, built once and shared by the workers."""

    def __init__(self, batch: Batch) -> None:
        self._batch = batch
        self._lock = threading.Lock()
        self._made: dict[str, RepoContext] = {}

    def get(self, task: LoadedTask) -> RepoContext:
        with self._lock:
            key = task.hidden.repo_dir
            if key not in self._made:
                self._made[key] = context_for(task.repo, cache_root())
            return self._made[key]


class _Pools:
    """Where the run's candidates are graded: as children of sealed sessions where the sandbox
    runs them (`CandidateSessions`: bubblewrap), else in one warm pool per repository
    environment, sized to the workers (each attempt's jails started while its agent works, so
    grading does not wait for a process to start).  The verdict is the same either way and cold;
    closed when the run ends, however it ends."""

    PER_TASK = 2  # the first run and the second a candidate that earned anything gets

    def __init__(self, sandbox: Sandbox, workers: int, enabled: bool) -> None:
        self._sandbox = sandbox if isinstance(sandbox, WarmStart) else None
        self._enabled = enabled and self._sandbox is not None and sandbox.isolated
        self._slots = self.PER_TASK * (max(1, workers) + 1)
        self._lock = threading.Lock()
        self._made: dict[str, WarmPool] = {}
        idle = idle_sessions(self._slots)
        self.forks = CandidateSessions(sandbox, max_idle=idle) if self._enabled else None

    def get(self, task: LoadedTask) -> WarmPool | None:
        if not self._enabled or self._sandbox is None:
            return None
        with self._lock:
            key = task.hidden.repo_dir
            if key not in self._made:
                self._made[key] = WarmPool(
                    self._sandbox, per_key=self.PER_TASK, max_slots=self._slots, refill=False
                )
            return self._made[key]

    def close(self) -> None:
        with self._lock:
            made, self._made, self._enabled = list(self._made.values()), {}, False
        for pool in made:
            pool.close()
        if self.forks is not None:
            self.forks.close()


def run_batch(options: RunOptions, progress: Progress | None = None) -> RunSummary:
    """Run the agent on every selected task and sample not already graded in RUN_DIR.

    The batch is checked first (every selected task loads, its files match the manifest), so a
    broken or edited batch is a one-line error before any agent runs.  RUN_DIR is locked for the
    whole run; rows cut short by an earlier crash are moved aside before resuming."""
    agent = make_agent(options.agent, options.model)
    batch = Batch.open(options.tasks, verify=options.verify)
    ids = choose(
        batch,
        options.task_ids,
        options.limit,
        options.bands,
        options.max_solve_rate,
        options.kinds,
    )
    identity = RunIdentity(
        tasks=str(batch.root),
        agent=agent.identity,
        sandbox=options.sandbox_name,
        samples=options.samples,
    )
    with locked_run_dir(options.out):
        claim_run_dir(options.out, identity)
        torn = repair_results(options.out)
        existing = load_rows(options.out)
        todo = [
            (ident, sample)
            for ident in ids
            for sample in range(options.samples)
            if (ident, sample) not in existing
            or existing[(ident, sample)].status not in DONE_STATUSES
        ]
        for ident in dict.fromkeys(ident for ident, _ in todo):
            batch.load(ident)  # raises the one-line error of a broken task before any agent runs
        fresh = _run_all(batch, todo, options, agent, progress or NullProgress())
    rows = tuple({**existing, **fresh}[(i, s)] for i in ids for s in range(options.samples))
    symbols = {ident: batch.spec(ident).source.symbol for ident in ids}
    resumed = len(ids) * options.samples - len(todo)
    return RunSummary(
        rows=rows, resumed=resumed, symbols=symbols, torn=torn, samples=options.samples
    )


def _run_all(
    batch: Batch,
    todo: list[tuple[str, int]],
    options: RunOptions,
    agent: Agent,
    show: Progress,
) -> dict[tuple[str, int], ResultRow]:
    show.stage(f"running the agent on {len(todo)} attempt(s)", total=len(todo))
    log = ResultLog(options.out)
    if options.executor != "local":
        return _run_spread(batch, todo, options, log, show)
    contexts = _Contexts(batch)
    pools = _Pools(options.agent.sandbox, options.workers, options.warm)

    def target_file(job: tuple[str, int]) -> tuple[str, str]:
        source = batch.spec(job[0]).source
        return source.repo, source.path

    # a file's attempts one after another: each finds the sessions the one before it used
    workers = max(1, options.workers)
    order = in_lanes(todo, target_file, workers)
    # and a file's first attempt finds them started: `AHEAD` attempts per worker earlier
    early = openers(order, target_file, AHEAD * workers) if options.warm else {}
    heralds = {order[at]: later for at, later in early.items()}

    def one(job: tuple[str, int]) -> ResultRow:
        for later in heralds.get(job, ()):
            _get_ready(batch, later[0], options.agent.sandbox, contexts, pools)
        row = _attempt(batch, job, options, agent, contexts, pools)
        log.append([row])
        show.advance()
        return row

    try:
        with ThreadPoolExecutor(max_workers=workers) as threads:
            return {(r.task_id, r.sample): r for r in map_in_order(threads, one, order)}
    finally:
        pools.close()  # also on Ctrl-C: no started jail outlives the run


def _get_ready(
    batch: Batch, ident: str, sandbox: Sandbox, contexts: _Contexts, pools: _Pools
) -> None:
    """Start the sessions a later attempt at `ident` will grade in, where candidates are graded
    in sessions (kept for no attempt: that attempt takes them).  Best effort: what fails here
    fails again, and is reported, in the attempt itself."""
    try:
        task = batch.load(ident)
        ctx = contexts.get(task)
        if pools.forks is not None and pools.forks.serves(ctx):
            _prewarm(task, Jail(ctx, sandbox, candidates=pools.forks))
    except Exception:  # noqa: BLE001 - the attempt reports it
        return


def _prewarm(task: LoadedTask, jail: Jail) -> None:
    """Start the sessions or warm jails `task`'s grade takes (a JavaScript task's: its warm
    Node jail, `grading.javascript.prewarm_script`, where the jail has a pool)."""
    if task.spec.language == "python":
        jail.prewarm(task.hidden.target, task.inputs, task.hidden.grading)
    elif is_script_task(task) and jail.pool is not None:
        prewarm_script(task, jail.pool)


def _run_spread(
    batch: Batch,
    todo: list[tuple[str, int]],
    options: RunOptions,
    log: ResultLog,
    show: Progress,
) -> dict[tuple[str, int], ResultRow]:
    """Each attempt a task of the executor (a Ray task: on any node of the cluster); its row
    comes back here to be logged. The batch and RUN_DIR are the same paths on every node."""
    work = _Attempts(replace(options, tasks=batch.root, warm=False))
    rows: dict[tuple[str, int], ResultRow] = {}
    spread = get_executor(options.executor, parallel=options.workers, address=options.ray_address)
    with spread:
        for row in spread.map(work, todo):
            log.append([row])
            show.advance()
            rows[(row.task_id, row.sample)] = row
    return rows


@dataclass(frozen=True)
class _Attempts:
    """One attempt, wherever the executor runs it: the batch, agent and environments are made
    there (they do not pickle), and grading is cold (no warm pool outlives the attempt)."""

    options: RunOptions

    def __call__(self, job: tuple[str, int]) -> ResultRow:
        options = self.options
        batch = Batch.open(options.tasks, verify=options.verify)
        agent = make_agent(options.agent, options.model)
        pools = _Pools(options.agent.sandbox, 1, enabled=False)
        return _attempt(batch, job, options, agent, _Contexts(batch), pools)


def _attempt(
    batch: Batch,
    job: tuple[str, int],
    options: RunOptions,
    agent: Agent,
    contexts: _Contexts,
    pools: _Pools,
) -> ResultRow:
    ident, sample = job
    started = time.monotonic()
    outcome = AgentOutcome("error", None, 0.0, "")
    workspace = options.out / "workspaces" / f"{ident}.{sample}"
    try:
        task = batch.load(ident)
        ctx = contexts.get(task)
        jail = Jail(ctx, options.agent.sandbox, pools.get(task), candidates=pools.forks)
        _prewarm(task, jail)  # the grade's jails start while the agent works
        release_stale(workspace)
        if workspace.exists():
            shutil.rmtree(workspace)
        quota = options.agent.disk_quota_mb
        with workspace_quota(workspace, quota, keep=options.keep_workspaces) as limit:
            make_workspace(task, workspace)
            outcome = limit.judge(agent.attempt(task, workspace, ctx))
            read = read_target(workspace, task.hidden.target.path)
        _save_transcript(options.out, job, outcome)
        _save_logs(options.out, job, outcome)
        if outcome.infra_error:
            verdict = _verdict(ident, None, "infra_error", f"agent: {outcome.infra_error}")
        else:
            verdict = _grade_read(task, read, jail, options, sample)
    except Exception as exc:  # noqa: BLE001 - our failure: recorded as infra_error, run goes on
        verdict = _verdict(
            ident, None, "infra_error", f"harness error: {type(exc).__name__}: {exc}"
        )
    finally:
        if not options.keep_workspaces and workspace.exists():
            shutil.rmtree(workspace, ignore_errors=True)
    return ResultRow(
        task_id=ident,
        sample=sample,
        reward=verdict.reward,
        status=verdict.status,
        reason=_reason(verdict, outcome),
        agent_status=outcome.status,
        agent_exit_code=outcome.exit_code,
        duration_s=round(time.monotonic() - started, 3),
        verdict=verdict,
        prompt_tokens=outcome.prompt_tokens,
        completion_tokens=outcome.completion_tokens,
        copy=verdict.copy_share,
        copy_run=verdict.copy_run,
    )


def _save_transcript(out: Path, job: tuple[str, int], outcome: AgentOutcome) -> None:
    """A built-in agent's whole conversation: RUN_DIR/transcripts/<task>/<sample>.json."""
    if outcome.transcript is not None:
        text = jsonl.text(outcome.transcript, indent=1, ensure_ascii=False) + "\n"
        confined.write_bytes(out, f"transcripts/{job[0]}/{job[1]}.json", text.encode("utf-8"))


def _save_logs(out: Path, job: tuple[str, int], outcome: AgentOutcome) -> None:
    """The agent command's output: RUN_DIR/logs/<task>/<sample>.stdout and .stderr."""
    for name, data in (("stdout", outcome.stdout), ("stderr", outcome.stderr)):
        if data:
            confined.write_bytes(out, f"logs/{job[0]}/{job[1]}.{name}", data)


def _save_diff(out: Path, task: LoadedTask, sample: int, text: str) -> None:
    """What the agent changed in the target file: RUN_DIR/diffs/<task>/<sample>.diff, a unified
    diff against the stubbed file it was given (empty when it changed nothing)."""
    path = task.hidden.target.path
    before = task.stubbed_source().decode("utf-8", "replace").splitlines(keepends=True)
    after = text.splitlines(keepends=True)
    diff = "".join(difflib.unified_diff(before, after, f"a/{path}", f"b/{path}"))
    confined.write_bytes(out, f"diffs/{task.id}/{sample}.diff", diff.encode("utf-8"))


def _reason(verdict: Verdict, agent: AgentOutcome) -> str:
    if agent.status == EXCEEDED:
        return f"agent: disk quota exceeded; {verdict.reason}"
    return verdict.reason


def _grade_read(
    task: LoadedTask,
    read: TargetRead,
    jail: Jail,
    options: RunOptions,
    sample: int,
) -> Verdict:
    if read.violation:
        return _verdict(task.id, 0.0, "violation", read.violation)
    if read.text is None:
        return _verdict(task.id, 0.0, "graded", read.problem or "target file unreadable")
    confined.write_bytes(options.out, f"candidates/{task.id}/{sample}.py", read.text.encode())
    _save_diff(options.out, task, sample, read.text)
    verdict = grade_text(task, read.text, jail)
    if options.repo_tests:
        verdict = with_repo_tests(verdict, task, read.text, jail)
    return verdict


def _verdict(ident: str, reward: float | None, status: VerdictStatus, reason: str) -> Verdict:
    return Verdict(
        task_id=ident, reward=reward, status=status, reason=reason, grader_version=GRADER_VERSION
    )
