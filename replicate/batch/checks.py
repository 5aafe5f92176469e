"""Every name and path a batch gives, checked before anything acts on it (pure).

A batch is untrusted input: labs trade them, and a hidden `task.json` is as easy to edit as a
public one.  Task ids become folder names under the run directory, `path` fields are joined onto
snapshots and workspaces, lock lines go to pip.  Each check raises a one-line `ReplicateError`
naming the task and the field; `Batch.load` runs them all.
"""

from __future__ import annotations

from packaging.requirements import InvalidRequirement, Requirement

from replicate.core import HiddenTask, RepoRecord, TaskSpec, name_problem, path_problem
from replicate.errors import ReplicateError


def _refuse(task_id: str, field: str, value: str, problem: str) -> ReplicateError:
    shown = value if len(value) <= 120 else value[:117] + "..."
    return ReplicateError(f"task {task_id}: unsafe {field} {shown!r}: it {problem}")


def check_name(task_id: str, name: str, field: str) -> None:
    problem = name_problem(name)
    if problem:
        raise _refuse(task_id, field, name, problem)


def check_path(task_id: str, path: str, field: str, *, root_ok: bool = False) -> None:
    """A plain relative path (`.` for the root itself where `root_ok`)."""
    if root_ok and path == ".":
        return
    problem = path_problem(path)
    if problem:
        raise _refuse(task_id, field, path, problem)


def check_task(task_id: str, spec: TaskSpec, hidden: HiddenTask) -> None:
    """The ids match the folder; every path names the same plain relative file."""
    check_name(task_id, spec.id, "specs task.json id")
    if spec.id != task_id or hidden.id != task_id:
        other = spec.id if spec.id != task_id else hidden.id
        raise _refuse(task_id, "id", other, "differs from the task's folder name")
    check_name(task_id, hidden.repo_dir, "repo_dir")
    check_path(task_id, hidden.target.path, "target.path")
    sources = (("source.path", hidden.source.path), ("specs source.path", spec.source.path))
    for field, path in sources:
        if path != hidden.target.path:
            raise _refuse(task_id, field, path, "differs from target.path")


def check_repo(task_id: str, record: RepoRecord) -> None:
    """Import roots are plain relative paths; lock lines are pinned names, never pip options."""
    roots = (("source_roots", record.source_roots), ("extra_paths", record.extra_paths))
    for field, paths in roots:
        for path in paths:
            check_path(task_id, path, field, root_ok=True)
    for line in record.lock:
        problem = _lock_problem(line)
        if problem:
            raise _refuse(task_id, "lock line", line, problem)


def _lock_problem(line: str) -> str | None:
    if line.lstrip().startswith("-"):
        return "is a pip option, not a requirement"
    try:
        req = Requirement(line)
    except InvalidRequirement:
        return "is not a requirement"
    if req.url is not None:
        return "installs from a URL"
    specs = list(req.specifier)
    if len(specs) != 1 or specs[0].operator not in ("==", "==="):
        return "is not pinned to one version (name==version)"
    return None


def check_origin(task_id: str, origin: str) -> None:
    """A hidden input's origin is a test node id (`path::name`) or a doctest's path: it may be
    handed to pytest, so it is never an option and its path part stays inside the tree."""
    if not origin:
        return
    if origin.startswith("-"):
        raise _refuse(task_id, "input origin", origin, "looks like a command-line option")
    check_path(task_id, origin.split("::", 1)[0], "input origin")
