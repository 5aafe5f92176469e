"""From a repository snapshot in a batch to what the jail needs: tree, import roots, environment."""

from __future__ import annotations

from pathlib import Path

from replicate.batch import RepoSnapshot
from replicate.envs import Lock, ensure_env
from replicate.jail.calls import RepoContext


def context_for(snapshot: RepoSnapshot, cache: Path) -> RepoContext:
    """Build (or reuse from the cache) the environment recorded for the snapshot."""
    record = snapshot.record
    env = ensure_env(Lock(lines=record.lock, python=record.python, failed=()), cache)
    meta = snapshot.meta if snapshot.meta.is_dir() else None
    return RepoContext(
        tree=snapshot.tree,
        source_roots=record.source_roots,
        extra_paths=record.extra_paths,
        meta=meta,
        python=env.python,
        env_root=env.path,
        site_packages=env.site_packages,
        cache=cache,
    )
