"""The repository's dependency environment: discover requirements, resolve a lock, build a venv
(never with the repository itself installed), and fix up a source tree to run uninstalled."""

from __future__ import annotations

from replicate.envs.build import (
    Env,
    Lock,
    ensure_env,
    lock_without,
    python_version,
    resolve_lock,
)
from replicate.envs.deps import Requirements, discover_requirements
from replicate.envs.prepare import (
    check_metadata,
    metadata_dir,
    prepare_tree,
    source_version_files,
    static_version,
)
from replicate.envs.with_uv import installer_choice

__all__ = [
    "Env",
    "Lock",
    "Requirements",
    "check_metadata",
    "discover_requirements",
    "ensure_env",
    "installer_choice",
    "lock_without",
    "metadata_dir",
    "prepare_tree",
    "python_version",
    "resolve_lock",
    "source_version_files",
    "static_version",
]
