"""A degenerate agent: replaces the stubbed body of the target with one statement.

Usage (inside `replicate run`): python degenerate_agent.py none|first|raise|body STATEMENT
  none  -> `return None`
  first -> `return <first parameter after self/cls>` (`return None` when there is none)
  raise -> `raise ValueError`
  body  -> STATEMENT, one line (a family of `replicate.gen.families`: `return b`,
           `return x.__class__()`, `return ''`, chosen by the test for the task)
Standard library only: it runs with the task's own interpreter in the agent sandbox.
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

Def = ast.FunctionDef | ast.AsyncFunctionDef


def _find(body: list[ast.stmt], path: list[str]) -> Def | None:
    """The def at `path` (classes, then the function) among `body`."""
    for node in body:
        if isinstance(node, ast.ClassDef) and len(path) > 1 and node.name == path[0]:
            found = _find(node.body, path[1:])
            if found is not None:
                return found
        if isinstance(node, Def) and len(path) == 1 and node.name == path[0]:
            return node
    return None


def _target(tree: ast.Module, symbol: str) -> tuple[Def, bool] | None:
    """The target's def (the longest qualified name that matches) and whether it is in a class."""
    parts = symbol.split(".")
    for start in range(1, len(parts)):
        found = _find(tree.body, parts[start:])
        if found is not None:
            return found, len(parts) - start > 1
    return None


def _first_argument(node: Def, in_class: bool) -> str | None:
    names = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
    if in_class and not static:
        names = names[1:]
    if names:
        return names[0]
    if node.args.vararg is not None:
        return node.args.vararg.arg
    return node.args.kwonlyargs[0].arg if node.args.kwonlyargs else None


def main() -> None:
    mode = sys.argv[1]
    path = Path(os.environ["REPLICATE_WORKSPACE"]) / os.environ["REPLICATE_TARGET_FILE"]
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    found = _target(tree, os.environ["REPLICATE_TARGET"])
    if found is None:
        sys.exit("target not found")
    node, in_class = found
    stub = next(s for s in node.body if isinstance(s, ast.Raise))
    if mode == "first":
        statement = f"return {_first_argument(node, in_class) or 'None'}"
    elif mode == "body":
        statement = sys.argv[2]
    else:
        statement = {"none": "return None", "raise": "raise ValueError"}[mode]
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode("utf-8")))
    data = text.encode("utf-8")
    start = offsets[stub.lineno - 1] + stub.col_offset
    end = offsets[(stub.end_lineno or stub.lineno) - 1] + (stub.end_col_offset or 0)
    path.write_bytes(data[:start] + statement.encode("utf-8") + data[end:])


if __name__ == "__main__":
    main()
