"""Names and relative paths a batch may hold (pure): what is safe to join onto a root.

A batch is untrusted input; its task ids become folder names and its `path` fields are joined
onto snapshots, workspaces and run directories.  These checks say what is plain enough for that;
`replicate.confined` then walks such a path without following symlinks.
"""

from __future__ import annotations

import re

# A task id or a repository folder: what `replicate.core.ids` makes, and nothing else.
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,254}")


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a task id or folder name, or None when it can."""
    if SAFE_NAME.fullmatch(name):
        return None
    return "is not a plain name (letters, digits, '.', '_', '-'; at most 255; no leading dot)"


def path_problem(relpath: str) -> str | None:
    """Why `relpath` is not a plain, normalised, relative POSIX path, or None when it is."""
    if not relpath:
        return "is empty"
    if "\x00" in relpath or "\\" in relpath:
        return "holds a NUL or a backslash"
    if relpath.startswith("/"):
        return "is absolute"
    if any(part in ("", ".", "..") for part in relpath.split("/")):
        return "is not normalised (empty, '.' or '..' parts)"
    return None
