"""`replicate run --tasks DIR --agent CMD --out RUN_DIR`: score an agent on a batch."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from rich.table import Table

from replicate.agents import (
    DEFAULT_AGENT_TIMEOUT_S,
    DEFAULT_BASE_URL,
    DEFAULT_DISK_QUOTA_MB,
    DEFAULT_KEY_ENV,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TOKENS,
    AgentConfig,
    ModelConfig,
    builtin_names,
    is_builtin,
    parse_allow_hosts,
)
from replicate.cli import numbers
from replicate.cli.console import err_console
from replicate.cli.difficulty_options import (
    add_difficulty_arguments,
    add_kinds_argument,
    difficulty_filters,
    kinds_filter,
)
from replicate.cli.executors import add_executor_arguments
from replicate.cli.grade import NO_VERIFY_HELP, REPO_TESTS_HELP
from replicate.cli.progress import RichProgress
from replicate.core import ResultRow
from replicate.errors import InfraError, ReplicateError
from replicate.jail import Sandbox, get_sandbox, sandbox_names
from replicate.scoring import (
    TORN_FILE,
    RunOptions,
    RunSummary,
    TaskStats,
    overall_pass_at,
    run_batch,
    task_stats,
)


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("run", help="score an agent command on a batch")
    p.add_argument("--tasks", required=True, type=Path, help="task batch directory")
    p.add_argument(
        "--agent",
        required=True,
        help=f"shell command run in each task's workspace, or one of {', '.join(builtin_names())}",
    )
    p.add_argument("--out", required=True, type=Path, help="run directory (re-run to resume)")
    p.add_argument(
        "--workers",
        type=numbers.count,
        default=default_workers(),
        help="attempts at once (default: the cores this process may use)",
    )
    p.add_argument(
        "--samples",
        type=numbers.count,
        default=1,
        metavar="K",
        help="attempts per task (pass@k, k <= K)",
    )
    _model_arguments(p)
    p.add_argument("--sandbox", default="local", choices=sandbox_names())
    p.add_argument(
        "--timeout", type=numbers.seconds, default=DEFAULT_AGENT_TIMEOUT_S, help="agent seconds"
    )
    p.add_argument(
        "--disk-quota-mb",
        type=numbers.amount,
        default=DEFAULT_DISK_QUOTA_MB,
        metavar="MB",
        help=f"total size of each workspace (default {DEFAULT_DISK_QUOTA_MB}; 0: no cap)",
    )
    p.add_argument("--mount", action="append", default=[], help="read-only path for the agent")
    p.add_argument("--env", action="append", default=[], help="pass this variable to the agent")
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="let the agent reach this host (any port) or host:port through a proxy (repeatable)",
    )
    p.add_argument("--task", action="append", default=[], help="only this task id (repeatable)")
    p.add_argument("--limit", type=numbers.count, help="only the first N tasks")
    add_difficulty_arguments(p)
    add_kinds_argument(p)
    p.add_argument("--keep-workspaces", action="store_true", help="keep workspaces in RUN_DIR")
    p.add_argument("--repo-tests", action="store_true", help=REPO_TESTS_HELP)
    p.add_argument("--no-verify", action="store_true", help=NO_VERIFY_HELP)
    p.add_argument(
        "--cold", action="store_true", help="start each grading jail on demand (no warm pool)"
    )
    add_executor_arguments(p, "where attempts run (ray: each attempt a Ray task, graded cold)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    p.set_defaults(handler=handle)


def default_workers() -> int:
    """The cores this process may run on (its affinity mask, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _model_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="the model a built-in agent calls (--agent builtin:NAME)")
    p.add_argument(
        "--base-url",
        default=DEFAULT_BASE_URL,
        help="OpenAI-compatible endpoint; its host must be named in --allow-host",
    )
    p.add_argument(
        "--api-key-env",
        default=DEFAULT_KEY_ENV,
        metavar="VAR",
        help=f"the variable holding the API key (default {DEFAULT_KEY_ENV})",
    )
    p.add_argument("--max-steps", type=numbers.count, default=DEFAULT_MAX_STEPS, help="model calls")
    p.add_argument(
        "--max-tokens", type=numbers.count, default=DEFAULT_MAX_TOKENS, help="tokens per attempt"
    )


def _model_config(args: argparse.Namespace) -> ModelConfig | None:
    """The built-in agent's model, its key read from the environment (one-line errors)."""
    if args.model is None:
        return None
    if not is_builtin(args.agent):
        raise ReplicateError("--model is for the built-in agents (--agent builtin:NAME)")
    if args.max_steps < 1 or args.max_tokens < 1:
        raise ReplicateError("--max-steps and --max-tokens must be 1 or more")
    key = os.environ.get(args.api_key_env)
    if not key:
        raise ReplicateError(
            f"the built-in agent reads its API key from ${args.api_key_env}, which is not set "
            "(name another variable with --api-key-env)"
        )
    return ModelConfig(
        model=args.model,
        api_key=key,
        base_url=args.base_url,
        max_steps=args.max_steps,
        max_tokens=args.max_tokens,
    )


def _mounts(paths: list[str]) -> tuple[str, ...]:
    out = []
    for raw in paths:
        path = Path(raw).resolve()
        if not path.exists():
            raise ReplicateError(f"--mount path does not exist: {raw}")
        out.append(str(path))
    return tuple(out)


def _allow_hosts(values: list[str], sandbox: Sandbox, *, host_side: bool) -> tuple[str, ...]:
    """The --allow-host values, checked (one-line error) and in canonical form.  For a built-in
    agent they allow its host-side model calls only (its tools never get a network), so the
    sandbox need not isolate one."""
    try:
        rules = parse_allow_hosts(values)
    except ValueError as exc:
        raise ReplicateError(str(exc)) from None
    if rules and not sandbox.isolated and not host_side:
        raise ReplicateError(
            f"--allow-host needs a sandbox that isolates the network; {sandbox.name!r} does not"
        )
    return tuple(str(rule) for rule in rules)


def handle(args: argparse.Namespace) -> int:
    bands, bound = difficulty_filters(args)
    kinds = kinds_filter(args)  # before anything is started: a wrong name fails at once
    model = _model_config(args)
    sandbox = get_sandbox(args.sandbox)
    agent = AgentConfig(
        command=args.agent,
        sandbox=sandbox,
        timeout_s=args.timeout,
        mounts=_mounts(args.mount),
        passed_env={name: os.environ[name] for name in args.env if name in os.environ},
        allow_hosts=_allow_hosts(args.allow_host, sandbox, host_side=is_builtin(args.agent)),
        disk_quota_mb=args.disk_quota_mb or None,
    )
    options = RunOptions(
        tasks=args.tasks,
        out=args.out.resolve(),
        agent=agent,
        sandbox_name=args.sandbox,
        workers=args.workers,
        samples=args.samples,
        model=model,
        task_ids=tuple(args.task),
        limit=args.limit,
        bands=bands,
        max_solve_rate=bound,
        kinds=kinds,
        keep_workspaces=args.keep_workspaces,
        repo_tests=args.repo_tests,
        verify=not args.no_verify,
        warm=not args.cold,
        executor=args.executor,
        ray_address=args.ray_address,
    )
    with RichProgress(enabled=not args.json) as progress:
        summary = run_batch(options, progress)
    if args.json:
        print(json.dumps(summary_json(summary), indent=2))
    else:
        err_console().print(results_table(summary))
        if summary.samples > 1:
            err_console().print(samples_table(summary))
        trouble = agent_trouble(summary.rows, options.out, args.timeout)
        if trouble:
            err_console().print(f"[yellow]{trouble}[/]", soft_wrap=True, markup=True)
    return _closing_line(summary)


MISSING_FILE = ("No such file or directory", "can't open file", "not found")


def agent_trouble(rows: tuple[ResultRow, ...], out: Path, timeout_s: float) -> str | None:
    """A line on the agents that failed to run (exited non-zero, or timed out), with the end of
    the first one's stderr: an agent command that cannot start shows only as `error` in every
    row of the table, its reason in a log file.  None when every agent exited 0."""
    failed = [row for row in rows if row.agent_status == "error"]
    slow = sum(row.agent_status == "timeout" for row in rows)
    parts = []
    if failed:
        first = failed[0]
        codes = sorted({row.agent_exit_code for row in failed}, key=str)
        parts.append(
            f"{len(failed)} of {len(rows)} agent run(s) exited non-zero "
            f"(exit code {', '.join(map(str, codes))})"
        )
        log = out / "logs" / first.task_id / f"{first.sample}.stderr"
        last = _last_line(log)
        if last:
            parts.append(f"the first one's stderr ends: {last}")
            if any(sign in last for sign in MISSING_FILE):
                parts.append("the agent runs in the sandbox: a host path reaches it with --mount")
    if slow:
        parts.append(f"{slow} of {len(rows)} agent run(s) stopped at --timeout {timeout_s:g} s")
    if not parts:
        return None
    return "; ".join(parts) + f". Every agent's output: {out / 'logs'}/<task>/<sample>.stderr"


def _last_line(path: Path) -> str:
    try:
        lines = path.read_bytes()[-2000:].decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1].strip()[:300] if lines else ""


def _closing_line(summary: RunSummary) -> int:
    """The last line says what a pipeline must know; infrastructure errors exit 3 (the rows are
    all written first, and a re-run retries just those)."""
    console = err_console()
    if summary.torn:
        console.print(
            f"{summary.torn} torn line(s) of an earlier crash moved to {TORN_FILE}", soft_wrap=True
        )
    if summary.infra_errors:
        console.print(
            f"[yellow]{summary.infra_errors} of {len(summary.rows)} attempt(s) failed on our side "
            "(infra_error); run the same command again to retry them[/]",
            soft_wrap=True,
        )
        return InfraError.exit_code
    return 0


def results_table(summary: RunSummary) -> Table:
    table = Table(title=f"mean reward {summary.mean_reward:.3f} over {len(summary.rows)} attempts")
    table.add_column("target", overflow="fold")
    table.add_column("reward", justify="right")
    table.add_column("status")
    table.add_column("agent")
    table.add_column("s", justify="right")
    repo_tests = any(row.verdict.repo_tests is not None for row in summary.rows)
    tokens = any(row.prompt_tokens is not None for row in summary.rows)
    if repo_tests:
        table.add_column("repo tests", justify="right")
    if tokens:
        table.add_column("tokens in+out", justify="right")
    table.add_column("reason", overflow="fold")
    for row in summary.rows:
        cells = _cells(row)
        extra: tuple[str, ...] = (_repo_tests(row),) if repo_tests else ()
        extra += (f"{row.prompt_tokens or 0}+{row.completion_tokens or 0}",) if tokens else ()
        name = summary.symbols.get(row.task_id, row.task_id)
        name += f" #{row.sample}" if summary.samples > 1 else ""
        table.add_row(name, *cells[:-1], *extra, cells[-1])
    if summary.resumed:
        table.caption = f"{summary.resumed} attempt(s) kept from an earlier run of this RUN_DIR"
    return table


def summary_json(summary: RunSummary) -> dict[str, Any]:
    stats = task_stats(summary.rows, summary.samples)
    return {
        "mean_reward": summary.mean_reward,
        "samples": summary.samples,
        "pass_at_k": _by_k(overall_pass_at(stats, summary.samples)),
        "tasks": [_json_task(s) for s in stats],
        "rows": [_json_row(row) for row in summary.rows],
    }


def _by_k(values: tuple[float | None, ...]) -> dict[str, float | None]:
    return {str(k): value for k, value in enumerate(values, start=1)}


def _json_task(stats: TaskStats) -> dict[str, Any]:
    return {
        "task_id": stats.task_id,
        "attempts": stats.attempts,
        "successes": stats.successes,
        "mean_reward": stats.mean_reward,
        "pass_at_k": _by_k(stats.pass_at),
    }


def samples_table(summary: RunSummary) -> Table:
    """Per task over its samples: mean reward and pass@k (success: reward 1.0)."""
    stats = task_stats(summary.rows, summary.samples)
    table = Table(title=f"per task over {summary.samples} samples")
    table.add_column("target", overflow="fold")
    table.add_column("graded", justify="right")
    table.add_column("mean", justify="right")
    for k in range(1, summary.samples + 1):
        table.add_column(f"pass@{k}", justify="right")
    for one in stats:
        cells = (_number(one.mean_reward), *(_number(v) for v in one.pass_at))
        table.add_row(summary.symbols.get(one.task_id, one.task_id), str(one.attempts), *cells)
    overall = overall_pass_at(stats, summary.samples)
    table.add_row("all tasks", "", f"{summary.mean_reward:.3f}", *(_number(v) for v in overall))
    return table


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _json_row(row: ResultRow) -> dict[str, Any]:
    data = row.model_dump(mode="json", exclude={"verdict"})
    if row.verdict.repo_tests is not None:
        data["repo_tests"] = row.verdict.repo_tests.model_dump(mode="json")
    return data


def _repo_tests(row: ResultRow) -> str:
    found = row.verdict.repo_tests
    if found is None:
        return "-"
    return f"{found.passed}/{found.selected}" + (" (timeout)" if found.timed_out else "")


def _cells(row: ResultRow) -> tuple[str, ...]:
    reward = "-" if row.reward is None else f"{row.reward:.3f}"
    style = {"graded": "", "violation": "[red]", "infra_error": "[yellow]"}[row.status]
    return (
        reward,
        f"{style}{row.status}",
        row.agent_status,
        f"{row.duration_s:.1f}",
        row.reason,
    )
