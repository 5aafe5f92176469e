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

Before any of that, gen hides what it can (`copies_to_hide`, removed from the batch's tree at
prepare, so neither the agent's workspace nor any jail holds them): every built copy that spells
a target's name, outside the folders that hold the targets' own files; every compressed script
(`semver.min.js.gz`: no text search reads inside it, so it is hidden unread); and every file
outside the sources and the tests that holds a target's body verbatim. The audit above then finds
what hiding could not: a copy in a target's own folder, in a test, among the dependencies.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from replicate.batch import read_source
from replicate.core import Target
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
COMPRESSED = re.compile(r"\.[cm]?[jt]sx?(\.map)?\.(gz|br|zst|bz2|xz|zip)$")
TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "__mocks__"})
TEST_MARKS = (".test.", ".spec.")


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


def _files(tree: Path, compressed: bool = False) -> Iterator[Path]:
    """Each script file of `tree` (and, with `compressed`, each compressed one), no symlink."""
    for folder, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            script = name.endswith(SCRIPT_SUFFIXES) and not DECLARATIONS.search(name)
            if script or (compressed and COMPRESSED.search(name)):
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


def _in_tests(rel: Path) -> bool:
    return any(part in TEST_DIRS for part in rel.parts[:-1]) or any(
        mark in rel.name for mark in TEST_MARKS
    )


def copies_to_hide(tree: Path, targets: Sequence[Target]) -> tuple[Path, ...]:
    """The files of `tree` an agent could read `targets`' original bodies from and that gen
    removes before anything runs: built copies spelling a target's name outside the targets'
    own folders (`_built` for every target file), compressed scripts, and verbatim copies of a
    body outside the sources and the tests. Sorted; none of them holds a target."""
    own, sources = package_name(tree), {t.path for t in targets}
    if not sources:
        return ()
    names = sorted({t.name for t in targets}, key=len, reverse=True)
    word = re.compile(rf"(?<![\w$])(?:{'|'.join(map(re.escape, names))})(?![\w$])")
    needles = _needles(tree, targets)
    found = []
    for path in _files(tree, compressed=True):
        rel = path.relative_to(tree)
        if rel.as_posix() in sources:
            continue
        if COMPRESSED.search(rel.name):
            found.append(path)
            continue
        text = read_source(path, MAX_FILE_BYTES)
        if text is None or (rel.suffix == ".map" and "sourcesContent" not in text):
            continue
        built = all(_built(rel, Path(s), own) for s in sources) and word.search(text)
        copied = not built and not _in_tests(rel) and _holds_any(SPACE.sub("", text), needles)
        if built or copied:
            found.append(path)
    return tuple(sorted({*found, *_published_copies(tree, own)}))


def _published_copies(tree: Path, own: str | None) -> Iterator[Path]:
    """Every file of a published copy of the package itself under a `node_modules/` of `tree`
    (its package.json too: what `require` would resolve the name to)."""
    if own is None:
        return
    for folder, dirs, _ in os.walk(tree):
        dirs[:] = [d for d in dirs if d != ".git"]
        if Path(folder).name == "node_modules" and (Path(folder) / own).is_dir():
            for inner, _, files in os.walk(Path(folder) / own):
                yield from (Path(inner, name) for name in files)


def _holds_any(text: str, needles: frozenset[str]) -> bool:
    return any(needle in text for needle in needles)


def _needles(tree: Path, targets: Sequence[Target]) -> frozenset[str]:
    """Each target's body (a class's members' bodies) without whitespace, the long enough."""
    found = set()
    for target in targets:
        try:
            source = (tree / target.path).read_bytes()
        except OSError:
            continue
        for part in target.members or (target,):
            body = source[part.body_span.start_byte : part.body_span.end_byte]
            needle = SPACE.sub("", body.decode("utf-8", errors="replace"))
            if len(needle) >= MIN_COPIED:
                found.add(needle)
    return frozenset(found)
