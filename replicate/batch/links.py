"""The symlinks a batch may not hold, with or without its manifest.

A batch is untrusted input, and a link in it would make a reader take a file of the host's for
one of the batch's (a TASK.md linked to the user's notes goes into every exported prompt).  The
batch's files are read through `replicate.confined`, which follows none; on top of that a batch
is refused when `specs/`, `reference_impls/` or `_repos/` is a link or holds one directly, and a
task when its own folders, or its repository's, hold one anywhere, but for a link of the
repository's snapshot that leads to another of its files: `gen` keeps those, as the repository
has them (`replicate.acquire.export_tree` drops the others).
"""

from __future__ import annotations

import os
from pathlib import Path

from replicate import confined
from replicate.errors import ReplicateError

_TOPS = ("specs", "reference_impls", "reference_impls/_repos")


def refuse_top_links(root: Path) -> None:
    """No symlink for the batch's top folders or anything they hold directly."""
    for top in _TOPS:
        path = root / top
        found = [top] if path.is_symlink() else []
        if not found and path.is_dir():
            found = sorted(f"{top}/{item.name}" for item in os.scandir(path) if item.is_symlink())
        if found:
            raise ReplicateError(f"{root}: unsafe batch: {found[0]} is a symlink")


def first_link(root: Path, folder: str, tree: str | None = None) -> str | None:
    """What is wrong with the first symlink under `root/folder` (None: there is none); under
    `tree`, a link that leads into the tree is the snapshot's own and allowed."""
    if (root / folder).is_symlink():
        return f"{folder} is a symlink"
    for rel in confined.symlinks(root / folder):
        found = f"{folder}/{rel}"
        in_tree = tree is not None and (found == tree or found.startswith(f"{tree}/"))
        if not (in_tree and tree and _stays_in(root / tree, root / found)):
            return f"{found} is a symlink" + (" that leads out of the snapshot" if in_tree else "")
    return None


def _stays_in(tree: Path, link: Path) -> bool:
    """True when the symlink `link`, under `tree` (itself no link), leads into `tree` through
    any chain of links."""
    if link == tree or not link.is_relative_to(tree):
        return False
    return Path(os.path.realpath(link)).is_relative_to(os.path.realpath(tree))
