"""Bring a repository into a batch: acquire, snapshot, extract, build its environment."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from replicate.acquire import AcquiredRepo, acquire, export_tree
from replicate.batch import HIDDEN, REPOS, Batch, RepoSnapshot, remove_task
from replicate.cache import cache_root
from replicate.core import Progress, RepoRecord, repo_dir_name
from replicate.envs import (
    Requirements,
    check_metadata,
    discover_requirements,
    lock_without,
    metadata_dir,
    prepare_tree,
    python_version,
    resolve_lock,
    static_version,
)
from replicate.errors import ReplicateError
from replicate.gen import script_leaks
from replicate.jail import RepoContext, context_for, node_deps
from replicate.languages import Extraction, detect_language, get_language


@dataclass(frozen=True)
class PreparedRepo:
    snapshot: RepoSnapshot
    repo_dir: str
    extraction: Extraction
    context: RepoContext
    notes: tuple[str, ...]
    language: str = "python"  # or "javascript", "typescript" (`detect_language`)
    test_runner: str = ""  # a JavaScript/TypeScript tree's: `TestRunner`'s value

    def with_extra_paths(self, paths: tuple[str, ...]) -> PreparedRepo:
        extra = tuple(p for p in paths if p not in self.extraction.source_roots)
        return self._with_record(self.snapshot.record.model_copy(update={"extra_paths": extra}))

    def with_constraint(self, constraint: str) -> PreparedRepo:
        """The same repository with its environment re-resolved under one more requirement."""
        record = self.snapshot.record
        wanted = (*record.requirements, constraint)
        lock = resolve_lock(wanted, cache_root())
        if lock.failed:
            raise ReplicateError(f"cannot satisfy {constraint}: {lock.failed[0][1]}")
        note = f"ran the tests under {constraint}: the newest pytest rejects their configuration"
        updated = record.model_copy(update={"requirements": wanted, "lock": lock.lines})
        return replace(self._with_record(updated), notes=(*self.notes, note))

    def _with_record(self, record: RepoRecord) -> PreparedRepo:
        snapshot = replace(self.snapshot, record=record)
        return replace(self, snapshot=snapshot, context=context_for(snapshot, cache_root()))


def prepare_repo(
    spec: str,
    commit: str | None,
    out: Path,
    replace_old: bool,
    show: Progress,
    key: str | None = None,
) -> PreparedRepo:
    """The repository `spec` at `commit` in the batch `out`, as repository `key` (default: the
    name it gives itself, `AcquiredRepo.key`)."""
    cache = cache_root()
    show.stage(f"acquiring {spec}")
    repo = acquire(spec, commit, cache)
    if key is not None:
        repo = replace(repo, key=key)
    _check_batch(out, repo, replace_old)
    repo_dir = repo_dir_name(repo.key, repo.commit)
    root = out / HIDDEN / REPOS / repo_dir
    tree = root / "tree"
    if root.exists():
        shutil.rmtree(root)
    tree.mkdir(parents=True)
    export_tree(repo, tree)
    if not any(tree.iterdir()):
        raise ReplicateError(f"{spec} is empty at commit {repo.commit[:12]}")
    detection = detect_language(tree)
    words = "Python" if detection is None else "JavaScript/TypeScript"
    show.stage("extracting functions and methods")
    extraction = get_language(detection.language if detection else "python").discover(tree)
    if extraction.source_files == 0:
        raise ReplicateError(f"no {words} source files found in {spec}")
    if not extraction.targets:
        raise ReplicateError(f"no functions or methods to mint in {spec}")
    show.stage("building the repository's environment")
    if repo.is_plain_dir:  # the absolute path would make the batch depend on the machine
        repo = replace(repo, url=spec)
    if detection is None:
        record, notes = _environment(repo, tree, root, extraction, cache)
    else:
        hidden = _hide_copies(tree, extraction)
        record, notes = _script_record(repo, extraction), (*hidden, *_script_deps(tree, show))
    snapshot = RepoSnapshot(record=record, root=root)
    context = context_for(snapshot, cache)
    if detection is None:
        return PreparedRepo(snapshot, repo_dir, extraction, context, notes)
    runner = detection.runner.value
    return PreparedRepo(snapshot, repo_dir, extraction, context, notes, detection.language, runner)


def _script_record(repo: AcquiredRepo, extraction: Extraction) -> RepoRecord:
    """A JavaScript/TypeScript repository's record: no Python requirements (its environment
    is an empty one of this Python, which `context_for` builds once); its tests run with
    Node's built-ins (`gen/javascript.py`)."""
    return RepoRecord(
        key=repo.key,
        commit=repo.commit,
        url=repo.url,
        source_roots=extraction.source_roots,
        python=python_version(),
    )


def _hide_copies(tree: Path, extraction: Extraction) -> tuple[str, ...]:
    """The built, compressed and verbatim copies of a JavaScript/TypeScript tree's targets
    (`script_leaks.copies_to_hide`) removed from the batch's tree, so that neither the agent's
    workspace nor any jail holds them; the note that says which."""
    found = script_leaks.copies_to_hide(tree, (*extraction.targets, *extraction.classes))
    for path in found:
        path.unlink()
    if not found:
        return ()
    names = ", ".join(p.relative_to(tree).as_posix() for p in found[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    return (f"hid {len(found)} built or copied files holding the original: {names}{more}",)


def _script_deps(tree: Path, show: Progress) -> tuple[str, ...]:
    """The repository's npm dependencies installed into the cache (`node_deps`, no lifecycle
    script run), which every Node run of it then sees; what was installed, or why not."""
    if not node_deps.declares(tree):
        return ()
    show.stage("installing the repository's npm dependencies (--ignore-scripts)")
    done = node_deps.install(tree)
    return () if done is None else (done if isinstance(done, str) else done.note(),)


def _environment(
    repo: AcquiredRepo, tree: Path, root: Path, extraction: Extraction, cache: Path
) -> tuple[RepoRecord, tuple[str, ...]]:
    reqs = discover_requirements(tree, None)
    dist = reqs.dist_names[0] if reqs.dist_names else None
    version = static_version(tree) or "0.0.0"
    for name in reqs.dist_names or (None,):  # each names files (`.dist-info`) or goes into them
        check_metadata(name, version)
    notes = [*reqs.notes, *prepare_tree(tree, dist, version)]
    if dist:
        metadata_dir(tree, dist, version, root / "meta")
    wanted = [*reqs.runtime, *reqs.test, *reqs.pytest_plugins]
    lock, removed = lock_without(resolve_lock(wanted, cache), _never_installed(reqs))
    notes += [f"could not install {req}: {why}" for req, why in lock.failed]
    notes += [
        f"left {line} out of the environment (an installed copy would leak)" for line in removed
    ]
    record = RepoRecord(
        key=repo.key,
        commit=repo.commit,
        url=repo.url,
        source_roots=extraction.source_roots,
        python=lock.python,
        requirements=tuple(wanted),
        lock=lock.lines,
    )
    return record, tuple(notes)


def _never_installed(reqs: Requirements) -> tuple[str, ...]:
    """The repository's own distribution, and installers nobody asked for at run time."""
    runtime = {canonicalize_name(Requirement(r).name) for r in reqs.runtime}
    installers = tuple(n for n in ("pip", "setuptools", "wheel") if n not in runtime)
    return (*reqs.dist_names, *installers)


def _check_batch(out: Path, repo: AcquiredRepo, replace_old: bool) -> None:
    """Refuse to mix two commits of one repository in a batch, unless asked to replace."""
    folder = out / HIDDEN / REPOS
    if not folder.is_dir():
        return
    for snapshot in Batch(out).repos():
        record = snapshot.record
        if record.key != repo.key or record.commit == repo.commit:
            continue
        if not replace_old:
            raise ReplicateError(
                f"{out} already holds {record.key} at commit {record.commit[:12]}; mint commit "
                f"{repo.commit[:12]} into another directory, or pass --replace to drop the old "
                "tasks"
            )
        _drop_repo(out, snapshot)


def _drop_repo(out: Path, snapshot: RepoSnapshot) -> None:
    batch = Batch(out)
    for ident in batch.ids:
        if batch.spec(ident).source.repo == snapshot.record.key:
            remove_task(out, ident)
    shutil.rmtree(snapshot.root)
