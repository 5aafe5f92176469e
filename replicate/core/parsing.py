"""One `ast.parse` at a time, across the threads of a process (pure).

CPython before 3.11.8/3.12.2 (gh-106905) keeps the AST constructor's recursion depth per
interpreter, so two threads parsing at once (`gen` mints on threads, `run --workers 2` grades on
them) can fail with "SystemError: AST constructor recursion depth mismatch"; `warnings.
catch_warnings`, often held around a parse, is process-wide too.  Every parse that can run on a
worker thread holds `PARSE_LOCK`.
"""

from __future__ import annotations

import ast
import threading

PARSE_LOCK = threading.Lock()


def setup_call(text: str) -> ast.Call | None:
    """The first `setup(...)` (or `setuptools.setup(...)`) call of a `setup.py`'s text, parsed
    under `PARSE_LOCK`; None when there is none or the text does not parse. Nothing is run."""
    try:
        with PARSE_LOCK:
            tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node.func) == "setup":
            return node
    return None


def _called(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""
