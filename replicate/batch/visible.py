"""The code an agent can read beside its stubbed target, as `replicate.core.copying` indexes it:
every function of the repository's snapshot (the target's own definition left out when a body is
measured: the agent sees it stubbed), and the method of the same name on the target class's
standard-library bases (an override that copies its parent's method).

The standard library is the one this interpreter runs on (`sysconfig`), read as source without
importing anything. A base is followed when the target file names it through an import of a
standard-library module, then up that class's own bases, a few levels deep. Bases from the
repository's dependencies are not followed.
"""

from __future__ import annotations

import ast
import os
import sys
import sysconfig
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from replicate.core import CopyIndex, Target, Visible, body_tokens, parse, visible_in

MAX_FILE_BYTES = 2_000_000
DEPTH = 4  # bases followed up from the target's class


def repo_index(tree: Path) -> CopyIndex:
    """Every function of the Python files under `tree` (symlinks and caches skipped)."""
    return CopyIndex(_repo_functions(tree))


def _repo_functions(tree: Path) -> Iterator[Visible]:
    for folder, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", ".git"))
        for name in sorted(files):
            path = Path(folder, name)
            if not name.endswith(".py") or path.is_symlink():
                continue
            text = read_source(path)
            if text is not None:
                yield from visible_in(path.relative_to(tree).as_posix(), text)


def stdlib_parents(source: bytes, target: Target, stdlib: Path | None = None) -> list[Visible]:
    """The method named like `target` on its class's standard-library bases (nearest first)."""
    if target.class_name is None or "." in target.qualname.removesuffix("." + target.name):
        return []  # not a method of a top-level class
    module = parse(source)
    if module is None:
        return []
    root = stdlib or Path(sysconfig.get_paths()["stdlib"])
    owner = _class(module, target.class_name)
    if owner is None:
        return []
    found: list[Visible] = []
    todo = [(dotted, 0) for dotted in _bases(owner, _imports(module, ""))]
    seen: set[str] = set()
    while todo:
        dotted, depth = todo.pop(0)
        if dotted in seen or depth >= DEPTH:
            continue
        seen.add(dotted)
        named = _stdlib_class(root, dotted)
        if named is None:
            continue
        rel, tree, node = named
        for item in node.body:
            if (
                isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                and item.name == target.name
            ):
                where = f"stdlib {rel}:{item.lineno} {node.name}.{item.name}"
                found.append(Visible(where, f"<stdlib>/{rel}", item.lineno, body_tokens(item)))
        names = _imports(tree, dotted.rsplit(".", 1)[0])
        todo += [(base, depth + 1) for base in _bases(node, names)]
    return found


def _class(module: ast.Module, name: str) -> ast.ClassDef | None:
    for node in module.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    return None


def _imports(module: ast.Module, here: str) -> dict[str, str]:
    """Local name -> dotted name, for the imports and classes at a module's top level, also
    inside `try` and `if` (the first binding of a name wins: `try: from collections.abc import
    X` before its fallback); classes of the module itself map to `here.Name`."""
    names: dict[str, str] = {}
    for node in _top_level(module.body):
        if isinstance(node, ast.ClassDef) and here:
            names.setdefault(node.name, f"{here}.{node.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                names.setdefault(local, alias.name if alias.asname else local)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                names.setdefault(alias.asname or alias.name, f"{node.module}.{alias.name}")
    return names


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a module body, and those of the `try` and `if` blocks in it."""
    for node in body:
        yield node
        if isinstance(node, ast.Try):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse):
                yield from _top_level(block)
        elif isinstance(node, ast.If):
            yield from _top_level(node.body)
            yield from _top_level(node.orelse)


def _bases(node: ast.ClassDef, names: dict[str, str]) -> list[str]:
    out = []
    for base in node.bases:
        parts: list[str] = []
        while isinstance(base, ast.Attribute):
            parts.insert(0, base.attr)
            base = base.value
        if isinstance(base, ast.Name) and base.id in names:
            out.append(".".join([names[base.id], *parts]))
    return out


def _stdlib_class(
    root: Path, dotted: str, hops: int = DEPTH
) -> tuple[str, ast.Module, ast.ClassDef] | None:
    """The class a dotted name gives in the standard library's source, if it is there (through
    the imports of a module that re-exports it: `collections.abc` from `_collections_abc`)."""
    module, _, name = dotted.rpartition(".")
    if not module or module.split(".")[0] not in sys.stdlib_module_names:
        return None
    tree = _stdlib_module(root, module)
    if tree is None:
        return None
    rel, parsed = tree
    found = _class(parsed, name)
    if found is not None:
        return rel, parsed, found
    if hops <= 0:
        return None
    names = _imports(parsed, module)
    elsewhere = [names[name]] if name in names else []
    elsewhere += [
        f"{node.module}.{name}"
        for node in parsed.body
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
        if any(alias.name == "*" for alias in node.names)
    ]
    for other in elsewhere:
        if other != dotted and (made := _stdlib_class(root, other, hops - 1)) is not None:
            return made
    return None


@cache
def _stdlib_module(root: Path, module: str) -> tuple[str, ast.Module] | None:
    base = root.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        text = read_source(path) if path.is_file() else None
        parsed = parse(text) if text is not None else None
        if parsed is not None:
            return path.relative_to(root).as_posix(), parsed
    return None


def read_source(path: Path, limit: int = MAX_FILE_BYTES) -> str | None:
    """A source file's text (undecodable bytes replaced); None when it is larger than `limit`
    bytes or cannot be read."""
    try:
        if path.stat().st_size > limit:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
