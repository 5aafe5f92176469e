"""Remote repositories: one bare clone per repository key in the cache, fetched on demand."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from replicate.acquire.commands import (
    CLONE_TIMEOUT_S,
    FETCH_TIMEOUT_S,
    GitFailed,
    looks_like_sha,
    resolve_commit,
    run_git,
)
from replicate.cache import file_lock, staging_beside
from replicate.core import normalise_repo_url
from replicate.errors import ReplicateError

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_SCP = re.compile(r"^[\w.-]+@[\w.-]+:(?!//)\S")
_SCHEMES = frozenset({"http", "https", "ssh", "git", "file", "git+ssh", "ssh+git"})
_FULL_SHA = re.compile(r"^[0-9a-fA-F]{40}$")
_REFSPECS = ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"]


def is_remote_spec(spec: str) -> bool:
    """True for a URL (`scheme://...`) or an scp-like address (`git@host:owner/name`)."""
    if _URL.match(spec):
        return True
    return bool(_SCP.match(spec)) and not Path(spec).exists()


def redact(url: str) -> str:
    """`url` without a password (tokens in https URLs must not reach logs or errors)."""
    if not _URL.match(url):
        return url
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def clone_dir(cache: Path, key: str) -> Path:
    """Where the bare clone of repository `key` lives in the cache."""
    return cache / "clones" / hashlib.sha256(key.encode()).hexdigest()[:16]


def acquire_remote(url: str, commit: str | None, cache: Path) -> tuple[str, Path, str]:
    """Clone (or reuse) `url` and pin `commit`; return (repository key, git dir, full commit id)."""
    match = _URL.match(url)
    if match and match.group(1).lower() not in _SCHEMES:
        raise ReplicateError(f"cannot clone {redact(url)}: unsupported URL scheme {match.group(1)}")
    key = normalise_repo_url(url)
    dest = clone_dir(cache, key)
    rev = commit or "HEAD"
    with file_lock(dest.with_name(dest.name + ".lock")):
        fresh = not (dest / "HEAD").is_file()
        if fresh:
            clone_bare(url, dest)
        sha = _pin(dest, rev, fresh)
    if sha is None:
        raise ReplicateError(f"commit {rev} not found in {redact(url)}")
    return key, dest, sha


def clone_bare(url: str, dest: Path) -> None:
    """A bare clone of `url` built beside `dest` and renamed into place when complete (call it
    holding `dest`'s lock)."""
    staging = staging_beside(dest)
    try:
        target = staging / "repo.git"
        run_git(["clone", "--bare", "--quiet", "--", url, str(target)], timeout=CLONE_TIMEOUT_S)
        target.rename(dest)
    except GitFailed as exc:
        raise ReplicateError(f"cannot clone {redact(url)}: {exc.line or 'git failed'}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _pin(git_dir: Path, rev: str, fresh: bool) -> str | None:
    """Resolve `rev`; on a reused clone a symbolic rev or a missing commit triggers a fetch.

    A fetch that fails (offline, say) leaves the cached clone as it was.
    """
    if fresh or _FULL_SHA.match(rev):
        sha = resolve_commit(git_dir, rev)
        if sha is not None:
            return sha
        if fresh and not looks_like_sha(rev):
            return None
    _fetch(git_dir, _REFSPECS)
    sha = resolve_commit(git_dir, rev)
    if sha is None and _FULL_SHA.match(rev):
        _fetch(git_dir, [rev])
        sha = resolve_commit(git_dir, rev)
    return sha


def _fetch(git_dir: Path, refspecs: list[str]) -> bool:
    try:
        run_git(["fetch", "--quiet", "origin", *refspecs], cwd=git_dir, timeout=FETCH_TIMEOUT_S)
    except GitFailed:
        return False
    return True
