"""The base system every sandbox shows: what a shell, git and the interpreter need, nothing else.

The view is a whitelist computed from the real machine: parts of `/usr` (programs, shared
libraries, data), a handful of `/etc` files, the top-level `/bin`, `/lib`... links as the host has
them, and from the base interpreter's prefix only the interpreter, `libpython` and the standard
library.  Every Python package folder inside what is shown is covered by an empty read-only
directory: `site-packages`, `dist-packages`, wheel stores, `ensurepip/_bundled`, Debian's
`/usr/lib/python3*`, and the import roots of packages vendored by other software under `/usr`
(found by one bounded walk, done once per process).
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Subdirectories of /usr a shell, coreutils, git and libc need; /usr/local, /usr/src, /usr/include
# (and the rest) stay invisible.
USR_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32", "libexec", "share")
TOP_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
ETC_ENTRIES = (
    "passwd",
    "group",
    "hosts",
    "host.conf",
    "nsswitch.conf",
    "gai.conf",
    "protocols",
    "services",
    "ld.so.cache",
    "alternatives",
    "ssl/certs",
    "ssl/openssl.cnf",
    "localtime",
    "timezone",
    "locale.alias",
    "mime.types",
    "magic",
    "os-release",
    "terminfo",
    "gitconfig",
)
PACKAGE_DIR_NAMES = frozenset({"site-packages", "dist-packages", "python-wheels"})
PACKAGE_MARKERS = (".dist-info", ".egg-info", ".whl", ".egg")
INIT_NAMES = frozenset({"__init__.py", "__init__.pyc"})
_PYTHON_NAME = re.compile(r"^python(3(\.\d+)?)?$")
_PYTHONISH_DIR = re.compile(r"^python[0-9.]*$")
MAX_WALK_DIRS = 400_000


@dataclass(frozen=True)
class Symlink:
    path: str
    target: str


@dataclass(frozen=True)
class SystemView:
    """What a sandbox shows of the host; every path is absolute and the same inside and out.

    Apply in this order: `read_only` binds (parents before children), `symlinks`, then cover
    `hidden_dirs` with an empty read-only directory and `hidden_files` with an empty file; add a
    fresh /proc, a minimal /dev and a fresh tmpfs on each of `scratch`.
    """

    read_only: tuple[str, ...]
    symlinks: tuple[Symlink, ...]
    hidden_dirs: tuple[str, ...]
    hidden_files: tuple[str, ...]
    python: str
    stdlib: str
    scratch: tuple[str, ...] = ("/tmp",)


@functools.cache
def system_view() -> SystemView:
    """The view of this machine for this process's base interpreter (computed once)."""
    return build_system_view(sys.base_prefix, sys.version_info[:2])


def build_system_view(base_prefix: str, version: tuple[int, int], root: str = "/") -> SystemView:
    """Compute the view; `root` lets tests point it at a fake tree."""
    usr = os.path.join(root, "usr")
    ver = f"{version[0]}.{version[1]}"
    stdlib = os.path.join(base_prefix, "lib", f"python{ver}")
    links: list[Symlink] = []
    read_only: list[str] = []
    for name in TOP_LINKS:
        _show(os.path.join(root, name), read_only, links)
    for name in USR_DIRS:
        _show(os.path.join(usr, name), read_only, links)
    for entry in ETC_ENTRIES:
        _show(os.path.join(root, "etc", entry), read_only, links)
    for path in _prefix_entries(base_prefix, ver):
        if not _covered(path, read_only):
            _show(path, read_only, links)
    if not _covered(stdlib, read_only):
        read_only.append(stdlib)
    vendor_trees = [p for p in read_only if os.path.isdir(p) and not _is_within(stdlib, p)]
    explicit = [os.path.join(usr, "share", "doc"), *_debian_python_dirs(usr)]
    hidden = find_hidden(vendor_trees, stdlib=stdlib, explicit=explicit)
    hidden_dirs = tuple(h for h in hidden if os.path.isdir(h))
    python = os.path.join(base_prefix, "bin", f"python{ver}")
    return SystemView(
        read_only=tuple(sorted(set(read_only), key=_depth_key)),
        symlinks=tuple(links),
        hidden_dirs=hidden_dirs,
        hidden_files=tuple(h for h in hidden if h not in hidden_dirs),
        python=python,
        stdlib=stdlib,
    )


def find_hidden(
    trees: Sequence[str], *, stdlib: str, explicit: Iterable[str] = ()
) -> tuple[str, ...]:
    """Every Python package folder under `trees` and the standard library `stdlib`.

    Under `trees` (minus the stdlib) that is: folders named like package stores, folders holding
    wheels or distribution metadata, and the import root of every package (a folder holding an
    `__init__.py`).  Inside the stdlib only package stores (`site-packages`,
    `ensurepip/_bundled`...) count.  Nested results are collapsed into their outermost folder; a
    tree itself is never hidden (its package folders are, one by one).
    """
    found: set[str] = {p for p in explicit if os.path.lexists(p)}
    packages: set[str] = set()
    markers: set[str] = set()
    budget = [MAX_WALK_DIRS]
    for tree in trees:
        _walk(tree, stdlib, found, packages, markers, budget)
    _walk(stdlib, "", found, set(), set(), budget)
    protected = {os.path.normpath(t) for t in trees} | _ancestors(stdlib)
    for package in packages:
        top = package
        while os.path.dirname(top) in packages:
            top = os.path.dirname(top)
        found.add(_container_or_self(top, protected))
    found.update(_container_or_self(m, protected) for m in markers)
    kept: list[str] = []
    for path in sorted(found, key=_components):
        if os.path.normpath(path) in protected or _is_within(stdlib, path):
            continue
        if kept and _is_within(path, kept[-1]):
            continue
        if any(_is_within(path, t) for t in (*trees, stdlib)):
            kept.append(path)
    return tuple(kept)


def _walk(
    top: str, skip: str, found: set[str], packages: set[str], markers: set[str], budget: list[int]
) -> None:
    """Bounded iterative walk of `top` (no symlinks followed, `skip` not entered)."""
    stack = [top]
    while stack and budget[0] > 0:
        folder = stack.pop()
        budget[0] -= 1
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            if is_dir and (name in PACKAGE_DIR_NAMES or _is_bundled(folder, name)):
                found.add(entry.path)
            elif name.endswith(PACKAGE_MARKERS):
                markers.add(entry.path)
            elif name in INIT_NAMES:
                packages.add(folder)
            elif is_dir and entry.path != skip:
                stack.append(entry.path)


def _container_or_self(path: str, protected: set[str]) -> str:
    """The folder holding `path` (a top-level package, a wheel, a `.dist-info`), hidden whole.

    When that folder is one of the shown trees, or a shallow generic folder whose loss would
    break the system (`/usr/lib/x86_64-linux-gnu`, say), `path` itself instead.
    """
    folder = os.path.dirname(path)
    parent = os.path.dirname(folder)
    if folder in protected or (parent in protected and not _PYTHONISH_DIR.match(_name(folder))):
        return path
    return folder


def _prefix_entries(base_prefix: str, ver: str) -> list[str]:
    """The interpreter binaries (and their links) and libpython from the base prefix."""
    entries: list[str] = []
    for sub, wanted in (("bin", _PYTHON_NAME.match), ("lib", _is_libpython)):
        folder = os.path.join(base_prefix, sub)
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        entries += [os.path.join(folder, n) for n in names if wanted(n)]
    return entries


def _debian_python_dirs(usr: str) -> list[str]:
    lib = os.path.join(usr, "lib")
    try:
        names = os.listdir(lib)
    except OSError:
        return []
    return [os.path.join(lib, n) for n in sorted(names) if _PYTHONISH_DIR.match(n)]


def _show(path: str, read_only: list[str], links: list[Symlink]) -> None:
    if os.path.islink(path):
        links.append(Symlink(path=path, target=os.readlink(path)))
    elif os.path.exists(path):
        read_only.append(path)


def _is_libpython(name: str) -> bool:
    return name.startswith("libpython") and ".so" in name


def _is_bundled(folder: str, name: str) -> bool:
    return name == "_bundled" and _name(folder) == "ensurepip"


def _covered(path: str, shown: Sequence[str]) -> bool:
    return any(_is_within(path, s) for s in shown)


def _is_within(path: str, folder: str) -> bool:
    """True when `path` is `folder` or below it (purely lexical)."""
    if not folder:
        return False
    path, folder = os.path.normpath(path), os.path.normpath(folder)
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _ancestors(path: str) -> set[str]:
    out = set()
    path = os.path.normpath(path)
    while True:
        out.add(path)
        parent = os.path.dirname(path)
        if parent == path:
            return out
        path = parent


def _name(path: str) -> str:
    return os.path.basename(os.path.normpath(path))


def _components(path: str) -> list[str]:
    return os.path.normpath(path).split("/")


def _depth_key(path: str) -> tuple[int, str]:
    return (os.path.normpath(path).count("/"), path)
