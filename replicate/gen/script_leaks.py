"""The leak audit of a JavaScript/TypeScript task: a built copy of the original the repository
ships, that a candidate could `require` or read instead of writing the body.

Python's audit matches a body's fingerprint (`gen/leaks.py`, Python's AST); a built copy of a
JavaScript file is transpiled, bundled or minified (its names renamed, its statements rewritten),
so no fingerprint of the source survives it. What is looked for instead is where built copies
live, by name: a file in a build folder (`dist/`, `build/`, `lib/`, `umd/`, ...: one that does
not hold the target's own file), a `*.min.js`/`*.bundle.js`-like file, or anything in a published
copy of the package itself under `node_modules/<its name>/`, which spells the target's name (a
source map only when it carries the sources). Type declarations (`*.d.ts`) hold no bodies and
are left out. And a verbatim copy of the body anywhere else in the tree (whitespace aside; a
body of at least `MIN_COPIED` characters, shorter ones are everywhere). Such a task is dropped
(`DropReason.LEAKED`): its copy would be in the agent's workspace and in the jail its candidate
runs in. The same holds for the tree's installed npm dependencies, which the jail shows: a copy
of the package among them (`installed_copy`) drops every task.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

from replicate.jail import node_deps

BUILD_DIRS = frozenset({"dist", "build", "lib", "umd", "cjs", "esm", "es", "bundle", "bundles"})
SCRIPT_SUFFIXES = (".js", ".cjs", ".mjs", ".jsx", ".ts", ".cts", ".mts", ".tsx", ".map")
DECLARATIONS = re.compile(r"\.d\.[cm]?ts$")
BUILT_NAME = re.compile(r"\.(min|bundle|umd|prod|production|development)\.[cm]?js(\.map)?$")
MAX_FILE_BYTES = 5_000_000
MIN_COPIED = 40
BUILT = "a built copy in the repository"
COPIED = "a copy in the repository"
SPACE = re.compile(r"\s+")


def package_name(tree: Path) -> str | None:
    """The `name` of the repository's package.json, if it has one."""
    try:
        name = json.loads((tree / "package.json").read_text(encoding="utf-8")).get("name")
    except (OSError, ValueError, AttributeError):
        return None
    return name if isinstance(name, str) and name else None


def _built(rel: Path, target: Path, own: str | None) -> bool:
    """Whether `rel` (relative to the tree) is where a built copy of the package lives."""
    parts = rel.parts
    if "node_modules" in parts:
        at = len(parts) - parts[::-1].index("node_modules")  # just past the last one
        scoped = parts[at].startswith("@")
        return own is not None and "/".join(parts[at : at + (2 if scoped else 1)]) == own
    if BUILT_NAME.search(rel.name):
        return True
    folders = parts[:-1]
    for n, folder in enumerate(folders):
        if folder in BUILD_DIRS and target.parts[: n + 1] != parts[: n + 1]:
            return True
    return False


def _files(tree: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            if name.endswith(SCRIPT_SUFFIXES) and not DECLARATIONS.search(name):
                path = Path(folder, name)
                if not path.is_symlink():
                    yield path


@functools.lru_cache(maxsize=4)
def installed_copy(tree: Path) -> Path | None:
    """A copy of the package itself among the tree's installed npm dependencies
    (`node_deps`: the jail shows them to every candidate); their install removes each, so one
    found here is a folder installed another way. Looked for once a tree (a gen audits one)."""
    own, deps = package_name(tree), node_deps.installed(tree)
    if own is None or deps is None:
        return None
    return next(iter(node_deps.own_copies(deps.modules, own)), None)


def built_copy(tree: Path, target_path: str, name: str) -> Path | None:
    """The first built copy in `tree` that spells `name`, for the target in `target_path`, or
    a copy of the package among its installed dependencies (`installed_copy`)."""
    target = Path(target_path)
    own = package_name(tree)
    installed = installed_copy(tree)
    if installed is not None:
        return installed
    word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    for path in _files(tree):
        rel = path.relative_to(tree)
        if rel == target or not _built(rel, target, own):
            continue
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if rel.suffix == ".map" and "sourcesContent" not in text:
            continue
        if word.search(text):
            return path
    return None


@functools.lru_cache(maxsize=1)
def _squeezed(tree: Path) -> tuple[tuple[Path, str], ...]:
    """Each script file of `tree` (the last tree asked: a gen audits one) without whitespace."""
    found = []
    for path in _files(tree):
        try:
            if path.stat().st_size <= MAX_FILE_BYTES:
                text = path.read_text(encoding="utf-8", errors="replace")
                found.append((path, SPACE.sub("", text)))
        except OSError:
            continue
    return tuple(found)


def copied_body(tree: Path, target_path: str, body: bytes) -> Path | None:
    """The first file of `tree` besides the target's own that holds `body` verbatim."""
    needle = SPACE.sub("", body.decode("utf-8", errors="replace"))
    if len(needle) < MIN_COPIED:
        return None
    own = tree / target_path
    return next((p for p, text in _squeezed(tree) if p != own and needle in text), None)
