"""Acquire a repository at a pinned commit: a remote URL, a local repository, or a plain folder."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import git

from replicate.acquire.commands import resolve_commit
from replicate.acquire.naming import local_name_and_origin
from replicate.acquire.npm import is_npm_spec, parse_npm_pin, tarball_repo
from replicate.acquire.pypi import is_pypi_spec, parse_pin, sdist_repo
from replicate.acquire.remote import acquire_remote, is_remote_spec
from replicate.acquire.snapshot import snapshot_dir
from replicate.errors import ReplicateError


@dataclass(frozen=True)
class AcquiredRepo:
    """A repository pinned at one commit.

    `key` is the repository key: the normalised URL for a remote, `NAME-VERSION` for a PyPI
    sdist, the name a local repository gives itself (`acquire.naming`); `origin` tells two
    repositories of one key apart (`url:`, `root:` or `path:`, `naming.local_name_and_origin`;
    `pypi:` the sdist); `url` is the URL as given or the absolute path; `git_dir` is a repository
    holding `commit` (the cache's bare clone, the local repository itself, or the snapshot
    repository of a plain folder).
    """

    key: str
    url: str
    commit: str
    git_dir: Path
    is_plain_dir: bool
    origin: str = ""


def acquire(spec: str, commit: str | None, cache: Path) -> AcquiredRepo:
    """Pin `spec` (URL, local repository root, plain folder, `pypi:NAME==VERSION` or
    `npm:NAME@VERSION`) at `commit`
    (any rev; default HEAD).

    Remote repositories are cloned bare into `cache/clones/` and reused; local repositories are
    read in place; a folder that is not a repository root is snapshotted into a deterministic
    commit under `cache/snapshots/`; a pinned PyPI sdist becomes a repository with one
    deterministic commit under `cache/sdists/` (`replicate.acquire.pypi`), a pinned npm tarball
    one under `cache/npm-packages/` (`replicate.acquire.npm`).
    Errors are `ReplicateError` with a one-line message.
    """
    spec = spec.strip()
    if not spec:
        raise ReplicateError("no repository given")
    if commit is not None and not commit.strip():
        commit = None
    if is_remote_spec(spec):
        key, git_dir, sha = acquire_remote(spec, commit, cache)
        return AcquiredRepo(key, spec, sha, git_dir, is_plain_dir=False, origin=f"url:{key}")
    if is_npm_spec(spec):
        local = tarball_repo(*parse_npm_pin(spec), cache / "npm-packages")
        pinned = _acquire_local(str(local), commit, cache)
        return replace(pinned, key=local.name, url=spec, origin=spec)
    if is_pypi_spec(spec):
        local = sdist_repo(*parse_pin(spec), cache / "sdists")
        pinned = _acquire_local(str(local), commit, cache)
        return replace(pinned, key=local.resolve().name, url=spec, origin=spec.strip())
    return _acquire_local(spec, commit, cache)


def _acquire_local(spec: str, commit: str | None, cache: Path) -> AcquiredRepo:
    given = Path(spec).expanduser()
    if not given.exists():
        raise ReplicateError(f"no such repository or directory: {spec}")
    path = given.resolve()
    if not path.is_dir():
        raise ReplicateError(f"not a directory: {spec}")
    git_dir = repository_root_git_dir(path)
    plain = git_dir is None
    if git_dir is None:
        git_dir, snapshot = snapshot_dir(path, cache)
        sha = snapshot if commit in (None, "HEAD") else _pin(git_dir, commit, spec)
    else:
        if commit is None and resolve_commit(git_dir, "HEAD") is None:
            raise ReplicateError(f"{spec} is an empty repository (no commits)")
        sha = _pin(git_dir, commit or "HEAD", spec)
    key, origin = local_name_and_origin(git_dir, sha, path, plain)
    return AcquiredRepo(key, str(path), sha, git_dir, is_plain_dir=plain, origin=origin)


def _pin(git_dir: Path, rev: str | None, label: str) -> str:
    rev = rev or "HEAD"
    sha = resolve_commit(git_dir, rev)
    if sha is None:
        raise ReplicateError(f"commit {rev} not found in {label}")
    return sha


def repository_root_git_dir(path: Path) -> Path | None:
    """The git directory of the repository whose root is `path` (working tree or bare), else None.

    A folder inside another repository's working tree is not a root: it gives None.
    """
    try:
        repo = git.Repo(path, search_parent_directories=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    try:
        git_dir = Path(repo.git_dir).resolve()
        if repo.bare or git_dir == path:
            return git_dir
        tree = repo.working_tree_dir
        if tree is None or Path(tree).resolve() != path:
            return None
        return git_dir
    finally:
        repo.close()
