"""What counts as a leak of a reference, and finding one in source text (pure).

A leak is the reference body's normalised syntax tree — names kept; formatting, comments and the
docstring dropped — appearing anywhere an agent can see. Bodies of fewer than MIN_STATEMENTS
statements are too generic to count (docs/design.md §4).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from replicate.core import Target
from replicate.inputs import parse

MIN_STATEMENTS = 3
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Needle:
    """One reference body to look for: its fingerprint and the identifiers it must contain."""

    fingerprint: str
    words: frozenset[str]


def _statements(node: FunctionNode) -> list[ast.stmt]:
    body = list(node.body)
    first = body[0] if body else None
    is_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    if is_doc and isinstance(first.value.value, str):  # type: ignore[union-attr]
        body = body[1:]
    return body


def fingerprint(node: FunctionNode) -> str | None:
    """The hash of a function body's normalised tree, or None when it is too short to count."""
    body = _statements(node)
    if len(body) < MIN_STATEMENTS:
        return None
    dump = ast.dump(ast.Module(body=body, type_ignores=[]))
    return hashlib.sha256(dump.encode()).hexdigest()


def _identifiers(body: list[ast.stmt]) -> frozenset[str]:
    """Names that any source text parsing to this body must spell out verbatim."""
    words: set[str] = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name):
                words.add(node.id)
            elif isinstance(node, ast.Attribute):
                words.add(node.attr)
            elif isinstance(node, ast.arg | ast.keyword) and node.arg is not None:
                words.add(node.arg)
    return frozenset(words)


def functions(tree: ast.AST) -> Iterator[FunctionNode]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def needle_for(source: bytes, target: Target) -> tuple[Needle, int] | None:
    """The needle of a target's reference body, with the line its def starts on (to skip itself)."""
    nodes = _functions_of(source)
    if nodes is None:
        return None
    lines = range(target.def_span.start_line, target.def_span.end_line + 1)
    for node in nodes:
        if node.name == target.name and node.lineno in lines:
            found = fingerprint(node)
            if found is None:
                return None
            return Needle(found, _identifiers(_statements(node))), node.lineno
    return None


@functools.lru_cache(maxsize=4)
def _functions_of(source: bytes) -> tuple[FunctionNode, ...] | None:
    """The functions of a target's file (None when it does not parse), kept for the next tasks
    of the same file: a gen audits each as it is minted, and parsing the file per task was a
    tenth of a more-itertools gen's host time (read only: never changed by the callers)."""
    try:
        return tuple(functions(parse(source)))
    except (SyntaxError, ValueError):
        return None


def fingerprints(text: str) -> dict[str, tuple[int, ...]]:
    """Fingerprint -> the lines its functions start on, for each function of a source text long
    enough to count (none when the text does not parse)."""
    try:
        tree = parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    found: dict[str, list[int]] = {}
    for node in functions(tree):
        made = fingerprint(node)
        if made is not None:
            found.setdefault(made, []).append(node.lineno)
    return {made: tuple(lines) for made, lines in found.items()}


def hits(
    prints: Mapping[str, tuple[int, ...]],
    needles: Mapping[str, Needle],
    skip_line: Mapping[str, int] | None = None,
) -> list[str]:
    """Keys of the needles whose body is among a file's `fingerprints` (not counting a function
    that starts on the needle's `skip_line`: the reference itself)."""
    skip = skip_line or {}
    return [
        key
        for key, needle in needles.items()
        if any(line != skip.get(key) for line in prints.get(needle.fingerprint, ()))
    ]
