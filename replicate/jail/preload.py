"""Which modules a session may import once, before it forks its children.

A session's child imports the target's module as a fresh runner would, and with it the
target's package: its ``__init__`` and, usually, the sibling modules the ``__init__`` imports.
For the bundled sample library that is eight modules, ~1 ms of a ~9 ms run of 75 inputs,
repeated in every child though the siblings never change between runs; only the target's file
does. So the session's runner imports the siblings once, before its first child
(`runner.preloading._preload`), and each child runs only what can differ: the packages'
``__init__`` code and the target's module, against siblings already in `sys.modules`.

This module says which: the modules from outside the repository (the standard library's,
installed packages') that the modules a fresh import of the target runs import at import time,
as their statements name them, then the siblings that fresh import runs (reading the import
statements the modules run at import time) that can be imported without the target. The
target's packages are made in the runner without running their ``__init__`` (it imports the
target), so a module may be preloaded when nothing it imports at import time, followed
transitively through modules other than those packages, is the target's module. What reading
cannot see (an import by a computed name, an ``__init__``'s attribute read at import) the runner
checks when it imports them: in a child of its own first, which blocks the target's module and
reports the modules that imported cleanly, left no thread behind and drew nothing from
`random`; only those are imported in the session itself.

Reading only parses (``ast``); nothing of the repository runs on the host.
"""

from __future__ import annotations

import ast
import functools
import os
import warnings
from collections.abc import Iterator, Sequence

from replicate.core import PARSE_LOCK

MAX_MODULES = 400  # a fresh import of more is a framework, not a library's package


def preload_plan(roots: Sequence[str], target_module: str) -> tuple[str, ...]:
    """The modules a session of `target_module` may import before its children, in the order a
    fresh import of the target reaches them; () when there are none (or reading failed)."""
    return _plan(tuple(roots), target_module)


@functools.lru_cache(maxsize=512)
def _plan(roots: tuple[str, ...], target_module: str) -> tuple[str, ...]:
    graph = _Graph(roots)
    packages = ancestors(target_module)
    if graph.find(target_module) is None:
        return ()
    order = graph.reached([*packages, target_module])
    if order is None:
        return ()
    kept = [name for name in order if name != target_module and name not in packages]
    ours = [name for name in kept if not graph.reaches(name, target_module, set(packages))]
    outside = dict.fromkeys(name for module in order for name in graph.outside(module))
    return (*outside, *ours)


def ancestors(module: str) -> list[str]:
    """The packages `module` lies in, outermost first (`a`, `a.b` for `a.b.c`)."""
    parts = module.split(".")
    return [".".join(parts[:n]) for n in range(1, len(parts))]


class _Graph:
    """The repository's modules under `roots` (first root wins, as on sys.path) and the
    repository modules each imports when it runs."""

    def __init__(self, roots: tuple[str, ...]) -> None:
        self.roots = roots
        self._found: dict[str, str | None] = {}
        self._edges: dict[str, tuple[str, ...] | None] = {}
        self._outside: dict[str, tuple[str, ...]] = {}

    def find(self, name: str) -> str | None:
        """The file of module `name` in the repository, or None (standard library, installed)."""
        if name not in self._found:
            self._found[name] = _find(self.roots, name)
        return self._found[name]

    def edges(self, name: str) -> tuple[str, ...] | None:
        """The repository modules `name` imports when it runs, its own packages first; None when
        its file cannot be read or parsed."""
        if name not in self._edges:
            self._edges[name] = self._read(name)
        return self._edges[name]

    def outside(self, name: str) -> tuple[str, ...]:
        """The modules from outside the repository (the standard library, installed packages)
        `name` imports when it runs, as its statements name them."""
        self.edges(name)
        return self._outside.get(name, ())

    def _read(self, name: str) -> tuple[str, ...] | None:
        path = self.find(name)
        if path is None:
            return ()
        try:
            with open(path, "rb") as handle:
                source = handle.read()
            with PARSE_LOCK, warnings.catch_warnings():  # sessions start on worker threads
                warnings.simplefilter("ignore")
                tree = ast.parse(source, path)
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        found = [*ancestors(name)]
        outside: list[str] = []
        for imported, named in _imported_names(tree, package):
            found += [*ancestors(imported), imported]
            if named and self.find(imported.partition(".")[0]) is None:
                outside.append(imported)
        self._outside[name] = tuple(dict.fromkeys(outside))
        return tuple(dict.fromkeys(n for n in found if n != name and self.find(n) is not None))

    def reached(self, starts: Sequence[str]) -> list[str] | None:
        """The repository modules a fresh import of `starts` runs, depth first in the order
        their import statements come; None past MAX_MODULES or when one cannot be read."""
        order: list[str] = []
        seen: set[str] = set()
        stack = list(reversed(starts))
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            order.append(name)
            edges = self.edges(name)
            if edges is None or len(order) > MAX_MODULES:
                return None
            stack += reversed([e for e in edges if e not in seen])
        return order

    def reaches(self, start: str, goal: str, skipped: set[str]) -> bool:
        """Whether running `start` (with the packages in `skipped` made but not run) runs
        `goal`; True when a module on the way cannot be read."""
        seen = {start}
        stack = [start]
        while stack:
            edges = self.edges(stack.pop())
            if edges is None:
                return True
            for name in edges:
                if name == goal:
                    return True
                if name not in seen and name not in skipped:
                    seen.add(name)
                    stack.append(name)
        return False


def _find(roots: tuple[str, ...], name: str) -> str | None:
    parts = name.split(".")
    for root in roots:
        base = os.path.join(root, *parts)
        for path in (base + ".py", os.path.join(base, "__init__.py")):
            if os.path.isfile(path) and not os.path.islink(path):
                return path
    return None


def _imported_names(tree: ast.Module, package: str) -> Iterator[tuple[str, bool]]:
    """The modules the import statements that run at import time name (function bodies do not
    run then; class bodies and branches do), resolved against `package`, each with whether the
    statement names it as a module: a ``from`` import names its module, and each imported name
    is a possible submodule too."""
    for node in _import_time(tree.body):
        if isinstance(node, ast.Import):
            yield from ((alias.name, True) for alias in node.names)
        else:
            base = _resolve(node.module, node.level, package)
            if base is None:
                continue
            yield base, True
            yield from ((f"{base}.{a.name}", False) for a in node.names if a.name != "*")


def _import_time(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                for item in getattr(node, field, None) or ():
                    if isinstance(item, ast.stmt):
                        yield from _import_time([item])
                    elif isinstance(item, ast.ExceptHandler | ast.match_case):
                        yield from _import_time(item.body)


def _resolve(module: str | None, level: int, package: str) -> str | None:
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, module] if module else base) or None
