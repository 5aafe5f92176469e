"""Stable task ids and repository keys (pure)."""

from __future__ import annotations

import hashlib
import re
from urllib.parse import urlsplit

MAX_PART = 100  # keeps an id well under the 255-byte file-name limit
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def normalise_repo_url(url: str) -> str:
    """A remote URL reduced to host/path, lower-case host, no scheme, user, `.git` or slash.

    `https://github.com/a/b.git`, `git@github.com:a/b` and `ssh://git@github.com/a/b/` all give
    `github.com/a/b`.
    """
    text = url.strip()
    scp = re.match(r"^[\w.-]+@([\w.-]+):(?!//)(.+)$", text)
    if scp:
        host, path = scp.group(1), scp.group(2)
    else:
        parts = urlsplit(text)
        host, path = parts.hostname or "", parts.path
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")]
    return f"{host.lower()}/{path}" if host else path


def slug(text: str) -> str:
    """A file-name-safe rendering of `text` (no slashes, no spaces)."""
    return _UNSAFE.sub("-", text).strip("-.") or "x"


def repo_dir_name(repo_key: str, commit: str) -> str:
    """Folder name of a repository snapshot inside a batch: `<name>-<commit12>`."""
    name = slug(repo_key.rsplit("/", 1)[-1])
    digest = hashlib.sha256(repo_key.encode()).hexdigest()[:6]
    return f"{name}-{digest}-{commit[:12]}"


def task_id(repo_key: str, commit: str, symbol: str, kind: str = "") -> str:
    """Stable id from repository key, commit, symbol and task kind; unique and safe as a file
    name.  A function's or method's id (`kind` "") names no kind, as before task kinds (its
    symbol says it); a class's id names it: `<repo>__class.<symbol>__<digest>`."""
    name = slug(repo_key.rsplit("/", 1)[-1])[:MAX_PART]
    text = f"{repo_key}\n{commit}\n{symbol}" + (f"\n{kind}" if kind else "")
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    part = f"{kind}.{symbol}" if kind else symbol
    return f"{name}__{slug(part)[:MAX_PART]}__{digest}"
