"""Every `ast.parse` that can run on a worker thread holds `PARSE_LOCK` (`replicate.core.parsing`:
CPython before 3.11.8 fails two threads parsing at once with "AST constructor recursion depth
mismatch"; a session's preload parsing unlocked on gen's threads failed whole gens this way)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "replicate"
# Parsed before any worker thread starts: a repository's build files, read once by `prepare`.
SINGLE_THREADED = ("envs/",)


def unlocked_parses(source: str) -> list[int]:
    """The lines of `ast.parse` calls in `source` that no enclosing ``with PARSE_LOCK`` holds."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and ast.unparse(node.func) == "ast.parse"):
            continue
        above = parents.get(node)
        while above is not None and not _holds_lock(above):
            above = parents.get(above)
        if above is None:
            found.append(node.lineno)
    return found


def _holds_lock(node: ast.AST) -> bool:
    items = node.items if isinstance(node, ast.With) else []
    return any(ast.unparse(item.context_expr) == "PARSE_LOCK" for item in items)


def test_the_check_finds_an_unlocked_parse() -> None:  # the control
    unlocked = "import ast\ndef read(text):\n    return ast.parse(text)\n"
    locked = (
        "import ast\ndef read(text):\n"
        "    with PARSE_LOCK, other():\n        return ast.parse(text)\n"
    )
    assert unlocked_parses(unlocked) == [3]
    assert unlocked_parses(locked) == []


def test_every_threaded_parse_holds_the_lock() -> None:
    offending = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(SINGLE_THREADED):
            continue
        lines = unlocked_parses(path.read_text(encoding="utf-8"))
        if lines:
            offending[rel] = lines
    assert offending == {}
