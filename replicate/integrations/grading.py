"""A completion as a framework hands it over, graded against its task in the jail.

The batch is found from a row's `extra_info["tasks_dir"]` (what `replicate export` writes) or the
`REPLICATE_TASKS` environment variable.  Per process, each batch is opened once, each task loaded
once and each repository's environment context built once (`context_for`, from the cache).
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from replicate import GRADER_VERSION
from replicate.batch import Batch, LoadedTask
from replicate.cache import cache_root
from replicate.core import Verdict
from replicate.errors import ReplicateError
from replicate.executors import map_in_order
from replicate.grading import grade_text
from replicate.jail import (
    CandidateSessions,
    Jail,
    RepoContext,
    Sandbox,
    WarmPool,
    WarmStart,
    context_for,
    get_sandbox,
    idle_sessions,
)

TASKS_ENV = "REPLICATE_TASKS"


def completion_text(completion: object) -> str:
    """The text of a completion: a string, one chat message, or a list of chat messages (the
    assistant's contents, joined; the last message's when none is marked as the assistant's)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return str(completion.get("content") or "")
    if isinstance(completion, Sequence):
        messages = [m for m in completion if isinstance(m, Mapping)]
        said = [str(m.get("content") or "") for m in messages if m.get("role") == "assistant"]
        if said:
            return "\n".join(said)
        return str(messages[-1].get("content") or "") if messages else ""
    return "" if completion is None else str(completion)


def tasks_dir(extra_info: object = None) -> Path:
    """The batch directory: `extra_info["tasks_dir"]`, else `$REPLICATE_TASKS`."""
    if isinstance(extra_info, Mapping) and extra_info.get("tasks_dir"):
        return Path(str(extra_info["tasks_dir"]))
    configured = os.environ.get(TASKS_ENV, "").strip()
    if configured:
        return Path(configured)
    raise ReplicateError(f"no task batch: pass extra_info['tasks_dir'] or set {TASKS_ENV}")


def infra_verdict(task_id: str, reason: str) -> Verdict:
    return Verdict(
        task_id=task_id,
        reward=None,
        status="infra_error",
        reason=reason,
        grader_version=GRADER_VERSION,
    )


def reward_of(verdict: Verdict) -> float | None:
    """The reward, or None for an infrastructure failure (not the candidate's fault)."""
    if verdict.status == "infra_error":
        return None
    return float(verdict.reward or 0.0)


def recall_extras(verdict: Verdict) -> dict[str, float]:
    """The memorisation signal as a trainer's extras (numbers only: a candidate with no body
    to compare copied nothing, 0)."""
    return {"copy": float(verdict.copy_share or 0.0), "copy_run": float(verdict.copy_run or 0)}


def extra_logs(verdicts: Sequence[Verdict]) -> dict[str, list[float]]:
    """OpenRLHF's `extra_logs` of a batch of verdicts: `infra_error` (1.0 where our side
    failed), `copy` and `copy_run` (`recall_extras`), one value per verdict."""
    extras = [recall_extras(verdict) for verdict in verdicts]
    return {
        "infra_error": [1.0 if reward_of(verdict) is None else 0.0 for verdict in verdicts],
        "copy": [one["copy"] for one in extras],
        "copy_run": [one["copy_run"] for one in extras],
    }


@dataclass(frozen=True)
class GraderRecipe:
    """What a Grader was opened with: enough to open the same one in another process."""

    root: Path
    sandbox: str = "local"
    warm: bool = False
    warm_per_key: int = 1

    def open(self) -> Grader:
        return Grader(
            self.root, sandbox=self.sandbox, warm=self.warm, warm_per_key=self.warm_per_key
        )


class Grader:
    """Grades candidates for one batch; tasks and environment contexts are kept once loaded."""

    def __init__(
        self, root: Path, *, sandbox: str = "local", warm: bool = False, warm_per_key: int = 1
    ) -> None:
        self.recipe = GraderRecipe(root, sandbox, warm, warm_per_key)
        self.batch = Batch.open(root)
        self.sandbox: Sandbox = get_sandbox(sandbox)
        self._tasks: dict[str, LoadedTask] = {}
        self._contexts: dict[str, RepoContext] = {}
        self._lock = threading.Lock()
        self._build = threading.Lock()  # one environment build at a time
        warmable = warm and isinstance(self.sandbox, WarmStart) and self.sandbox.isolated
        slots = max(8, 2 * warm_per_key)
        self.pool = (
            WarmPool(self.sandbox, per_key=warm_per_key, max_slots=slots)  # type: ignore[arg-type]
            if warmable
            else None
        )
        idle = idle_sessions(slots)
        self.forks = CandidateSessions(self.sandbox, max_idle=idle) if warmable else None

    def task(self, task_id: str) -> LoadedTask:
        """The loaded task; an unknown id raises ReplicateError."""
        with self._lock:
            found = self._tasks.get(task_id)
        if found is None:
            found = self.batch.load(task_id)
            with self._lock:
                self._tasks[task_id] = found
        return found

    def context(self, task: LoadedTask) -> RepoContext:
        key = task.hidden.repo_dir
        with self._build:
            if key not in self._contexts:
                self._contexts[key] = context_for(task.repo, cache_root())
            return self._contexts[key]

    def prepare(self) -> list[str]:
        """Build every repository's environment context now (a server does, before serving);
        the problems of those that cannot be built (their grades will be infra errors)."""
        problems = []
        for snapshot in self.batch.repos():
            with self._build:
                if snapshot.root.name in self._contexts:
                    continue
                try:
                    self._contexts[snapshot.root.name] = context_for(snapshot, cache_root())
                except ReplicateError as exc:
                    problems.append(f"{snapshot.root.name}: {exc}")
        return problems

    def resolve(self, name: str) -> str:
        """The task id of `name` (an id or a unique symbol); unknown raises ReplicateError."""
        return self.batch.resolve(name)

    def grade(self, task_id: str, candidate: str) -> Verdict:
        """The verdict on `candidate`.  An unknown task raises ReplicateError; a task that does
        not load (a tampered or broken batch) or whose environment cannot be built is an infra
        error: not the candidate's fault, so no reward either way."""
        task_id = self.resolve(task_id)
        try:
            task = self.task(task_id)
            ctx = self.context(task)
        except ReplicateError as exc:
            return infra_verdict(task_id, f"cannot grade: {exc}")
        jail = Jail(ctx, self.sandbox, self.pool, candidates=self.forks)
        return grade_text(task, candidate, jail)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
        if self.forks is not None:
            self.forks.close()


_GRADERS: dict[Path, Grader] = {}
_GRADERS_LOCK = threading.Lock()


def grader_for(root: Path) -> Grader:
    """The process's grader for the batch at `root` (opened on first use), grading in warm
    jails: a trainer grades the samples of one prompt together, so after the first of a task
    the next jail for it has started already.  Its idle jails are stopped at exit."""
    key = root.expanduser().resolve()
    with _GRADERS_LOCK:
        if key not in _GRADERS:
            if not _HOOKED:
                atexit.register(close_graders)
                os.register_at_fork(after_in_child=_forget_in_child)
                _HOOKED.append(True)
            _GRADERS[key] = Grader(key, warm=True, warm_per_key=os.cpu_count() or 1)
        return _GRADERS[key]


_HOOKED: list[bool] = []


def _forget_in_child() -> None:
    """In a child forked from a process that graded (a trainer's data workers, say): the
    parent's graders hold the parent's sessions, jails and threads, none of which the child
    may use or end; the child opens its own on first use."""
    global _GRADERS_LOCK  # the parent's may have been held by another thread at the fork
    _GRADERS_LOCK = threading.Lock()
    _GRADERS.clear()


def close_graders() -> None:
    """Stop the warm jails and sessions of every grader this process opened."""
    with _GRADERS_LOCK:
        graders = list(_GRADERS.values())
        _GRADERS.clear()
    for grader in graders:
        grader.close()


def grade_many(items: Sequence[tuple[Path, str, str]]) -> list[Verdict]:
    """Grade (batch dir, task id, candidate text) items, a few at a time, in order."""
    if not items:
        return []

    def one(item: tuple[Path, str, str]) -> Verdict:
        root, task_id, candidate = item
        return grader_for(root).grade(task_id, candidate)

    workers = max(1, min(len(items), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="replicate-reward") as pool:
        return list(map_in_order(pool, one, items))
