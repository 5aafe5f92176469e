"""How much of a JavaScript/TypeScript target's file a prompt shows under `--context class`
(`replicate export`), as Python's `outline` does (`python_context`).

Pure. The stubbed file less every top-level definition that does not hold the target: function
and class declarations, `const f = (...) => ...` and other bindings of a function or a class,
`exports.f = function ...`, each with its `export`. What is not a definition stays: imports and
`require`s, constants, `module.exports = {...}`, the statement that holds the target (its class,
for a method). Each run of left-out lines becomes one comment saying which lines of the file
they were, numbered as the original file numbers them.
"""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from replicate.core import Target
from replicate.languages.javascript_extract import (
    CLASSES,
    FUNCTION_DECLARATIONS,
    FUNCTION_VALUES,
    parse_source,
)
from replicate.languages.javascript_splice import stub_source

# what binds a definition: extraction's function values and declarations, and classes
DEFINED_VALUES = FUNCTION_VALUES | {"class"}
DECLARATIONS = FUNCTION_DECLARATIONS | CLASSES


def outline(source: bytes, target: Target) -> bytes:
    """The part of `source` (the target's original file) around the target, the target
    stubbed; the comments name lines by their numbers in `source`."""
    stubbed = stub_source(source, target)
    tree = parse_source(stubbed, target.path)
    holding = target.def_span.start_line - 1  # rows before the body are the stubbed file's too
    dropped: set[int] = set()
    for statement in tree.root_node.named_children:
        first, last = statement.start_point[0], statement.end_point[0]
        if _is_definition(statement) and not first <= holding <= last:
            dropped.update(range(first, last + 1))
    removed = source[target.body_span.start_byte : target.body_span.end_byte].count(b"\n")
    stub_row = target.body_span.start_line - 1

    def original(row: int) -> int:  # a 0-based row of the stubbed file, 1-based in `source`
        return row + 1 + (removed if row > stub_row else 0)

    lines = stubbed.decode("utf-8", errors="replace").splitlines(keepends=True)
    shown: list[str] = []
    gap: list[int] = []
    for row, line in enumerate(lines):
        if row in dropped or (gap and _is_filler(line)):
            gap.append(row)
            continue
        shown += _gap_lines(gap, lines, original)
        gap = []
        shown.append(line)
    shown += _gap_lines(gap, lines, original)
    return "".join(shown).encode("utf-8")


def _is_definition(statement: Node) -> bool:
    inner = statement
    if statement.type == "export_statement":
        inner = statement.child_by_field_name("declaration") or statement
    if inner.type in DECLARATIONS:
        return True
    if inner.type in ("lexical_declaration", "variable_declaration"):
        values = [d.child_by_field_name("value") for d in inner.named_children]
        return bool(values) and all(v is not None and v.type in DEFINED_VALUES for v in values)
    if inner.type == "expression_statement" and inner.named_children:
        assignment = inner.named_children[0]
        right = assignment.child_by_field_name("right")
        left = assignment.child_by_field_name("left")
        return (
            assignment.type == "assignment_expression"
            and left is not None
            and left.type == "member_expression"
            and right is not None
            and right.type in DEFINED_VALUES
        )
    return False


def _is_filler(text: str) -> bool:
    stripped = text.strip()
    return not stripped or stripped.startswith(("//", "/*", "*"))


def _gap_lines(gap: list[int], lines: list[str], original: Callable[[int], int]) -> list[str]:
    """One comment in place of a left-out run of rows; the filler rows ending it kept after."""
    if not gap:
        return []
    trailing: list[str] = []
    rows = list(gap)
    while rows and _is_filler(lines[rows[-1]]):
        trailing.insert(0, lines[rows.pop()])
    if not rows:
        return trailing
    first, last = original(rows[0]), original(rows[-1])
    return [f"// ... (lines {first}-{last} of this file not shown)\n", *trailing]
