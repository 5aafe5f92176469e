"""Definitions of one Python block (a module or a class body) whose name is bound exactly once.

A name bound twice at the same level — two defs in the branches of an `if`, a def and a later
`f = wrap(f)`, a fallback def beside `from _speedups import f` — is not a target: which object
the module ends up holding is not the def we would stub. `@overload` stubs do not count as
bindings. Defs under `if __name__ == "__main__":` never run on import and are ignored; defs under
`if TYPE_CHECKING:` are counted but marked.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tree_sitter import Node

_DEFINITIONS = frozenset({"function_definition", "class_definition", "decorated_definition"})
_COMPOUND = frozenset(
    {"if_statement", "try_statement", "with_statement", "for_statement", "while_statement"}
)
_CLAUSES = frozenset(
    {"elif_clause", "else_clause", "except_clause", "except_group_clause", "finally_clause"}
)
_IMPORTS = frozenset({"import_statement", "import_from_statement"})
_NOT_BOUND_INSIDE = frozenset({"attribute", "subscript", "call"})


@dataclass(frozen=True)
class Definition:
    """A function or class definition: the def node, its outer (decorated) node, decorators."""

    node: Node
    outer: Node
    name: str
    decorators: tuple[str, ...]
    in_type_checking: bool


@dataclass
class _Scan:
    nested: bool
    bindings: Counter[str] = field(default_factory=Counter)
    found: list[Definition] = field(default_factory=list)


def collect_definitions(container: Node, *, nested: bool) -> list[Definition]:
    """Definitions in `container`, in source order, keeping only names bound once.

    With `nested`, defs inside top-level `if`/`try`/`with` blocks are included too; without it
    only direct children are (their nested bindings still count).
    """
    scan = _Scan(nested=nested)
    _scan_block(container, scan, in_type_checking=False, emit=True)
    return [item for item in scan.found if scan.bindings[item.name] == 1]


def _text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def _scan_block(block: Node, scan: _Scan, *, in_type_checking: bool, emit: bool) -> None:
    for child in block.named_children:
        kind = child.type
        if kind in _DEFINITIONS:
            _add_definition(child, scan, in_type_checking=in_type_checking, emit=emit)
        elif kind == "if_statement":
            _scan_if(child, scan, in_type_checking=in_type_checking, emit=emit and scan.nested)
        elif kind in _COMPOUND:
            emit_inner = emit and scan.nested and kind in {"try_statement", "with_statement"}
            for inner in _inner_blocks(child):
                _scan_block(inner, scan, in_type_checking=in_type_checking, emit=emit_inner)
        elif kind in _IMPORTS:
            scan.bindings.update(import_names(child))
        elif kind == "expression_statement":
            for expression in child.named_children:
                scan.bindings.update(assigned_names(expression))


def _add_definition(node: Node, scan: _Scan, *, in_type_checking: bool, emit: bool) -> None:
    inner = node.child_by_field_name("definition") if node.type == "decorated_definition" else node
    if inner is None:
        return
    name = _text(inner.child_by_field_name("name"))
    decorators = tuple(
        _text(decorator.named_children[0]) if decorator.named_children else ""
        for decorator in node.children
        if decorator.type == "decorator"
    )
    if any(decorator_name(text) == "overload" for text in decorators):
        return
    scan.bindings[name] += 1
    if emit:
        scan.found.append(Definition(inner, node, name, decorators, in_type_checking))


def _scan_if(node: Node, scan: _Scan, *, in_type_checking: bool, emit: bool) -> None:
    condition = _text(node.child_by_field_name("condition")).replace("'", '"')
    if "".join(condition.split()) in {'__name__=="__main__"', '"__main__"==__name__'}:
        return
    checking = condition.rsplit(".", 1)[-1].strip() == "TYPE_CHECKING"
    consequence = node.child_by_field_name("consequence")
    for inner in _inner_blocks(node):
        in_consequence = consequence is not None and inner.id == consequence.id
        _scan_block(
            inner,
            scan,
            in_type_checking=in_type_checking or (checking and in_consequence),
            emit=emit,
        )


def _inner_blocks(node: Node) -> list[Node]:
    """The blocks of a compound statement: its own and those of its clauses, in order."""
    blocks: list[Node] = []
    for child in node.children:
        if child.type == "block":
            blocks.append(child)
        elif child.type in _CLAUSES:
            blocks.extend(grand for grand in child.children if grand.type == "block")
    return blocks


def decorator_name(expression: str) -> str:
    """`functools.lru_cache(maxsize=2)` -> `lru_cache`; `x.setter` -> `setter`."""
    return expression.split("(", 1)[0].strip().rsplit(".", 1)[-1]


def import_names(node: Node) -> list[str]:
    """Names an import statement binds (`import a.b` binds `a`; `from x import *` none)."""
    names: list[str] = []
    for child in node.children_by_field_name("name"):
        if child.type == "aliased_import":
            names.append(_text(child.child_by_field_name("alias")))
        else:
            dotted = _text(child)
            names.append(dotted if node.type == "import_from_statement" else dotted.split(".")[0])
    return names


def assigned_names(node: Node) -> list[str]:
    """Plain names bound by an assignment (chained and unpacking included); no annotations."""
    if node.type not in {"assignment", "augmented_assignment"}:
        return []
    right = node.child_by_field_name("right")
    if right is None:
        return []
    names = _target_names(node.child_by_field_name("left"))
    return names + assigned_names(right)


def _target_names(node: Node | None) -> list[str]:
    if node is None or node.type in _NOT_BOUND_INSIDE:
        return []
    if node.type == "identifier":
        return [_text(node)]
    names: list[str] = []
    for child in node.named_children:
        names.extend(_target_names(child))
    return names
