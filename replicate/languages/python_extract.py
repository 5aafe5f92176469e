"""Targets of one Python file, found with tree-sitter: byte-exact spans of functions and methods.

Which definitions are targets (module-level functions, methods directly in a class body) and which
are not (nested defs, dunders, properties, overloads, abstract or empty bodies, TYPE_CHECKING
blocks, names bound more than once at their level) is decided here; `python_defs` collects the
definitions and `python_body` reads a body.
"""

from __future__ import annotations

import functools

from tree_sitter import Language as TSLanguage
from tree_sitter import Node, Parser, Tree

from replicate.core import CallKind, Span, Target
from replicate.languages.python_body import read_body
from replicate.languages.python_defs import Definition, collect_definitions, decorator_name
from replicate.languages.syntax import first_error_line

# Decorators (last dotted part of the decorator, call arguments ignored) that make a def no target.
_EXCLUDED_DECORATORS = frozenset(
    {
        "property",
        "cached_property",
        "overload",
        "abstractmethod",
        "abstractproperty",
        "abstractclassmethod",
        "abstractstaticmethod",
        "setter",
        "getter",
        "deleter",
    }
)


@functools.lru_cache(maxsize=1)
def python_parser() -> Parser:
    """The tree-sitter parser for Python, built on first use."""
    import tree_sitter_python

    return Parser(TSLanguage(tree_sitter_python.language()))


def parse_tree(data: bytes) -> Tree:
    return python_parser().parse(data)


def extract_targets(data: bytes, tree: Tree, path: str, module: str) -> list[Target]:
    """Every target in one parsed file, in source order."""
    targets: list[Target] = []
    _collect(data, tree.root_node, path, module, (), targets)
    return targets


def _collect(
    data: bytes,
    container: Node,
    path: str,
    module: str,
    classes: tuple[str, ...],
    out: list[Target],
) -> None:
    for definition in collect_definitions(container, nested=not classes):
        if definition.node.type == "class_definition":
            body = definition.node.child_by_field_name("body")
            if body is not None and not definition.in_type_checking:
                _collect(data, body, path, module, (*classes, definition.name), out)
            continue
        target = _function_target(data, definition, path, module, classes)
        if target is not None:
            out.append(target)


def is_excluded_decorator(expression: str) -> bool:
    return decorator_name(expression) in _EXCLUDED_DECORATORS


def _is_dunder_or_private_method(name: str, in_class: bool) -> bool:
    dunder = len(name) > 4 and name.startswith("__") and name.endswith("__")
    mangled = in_class and name.startswith("__") and not name.endswith("__")
    return dunder or mangled


def _function_target(
    data: bytes, definition: Definition, path: str, module: str, classes: tuple[str, ...]
) -> Target | None:
    if definition.in_type_checking or _is_dunder_or_private_method(definition.name, bool(classes)):
        return None
    if any(is_excluded_decorator(text) for text in definition.decorators):
        return None
    body = read_body(data, definition.node)
    if body is None or body.trivial:
        return None
    return Target(
        path=path,
        module=module,
        qualname=".".join((*classes, definition.name)),
        kind=_kind(definition.decorators, bool(classes)),
        signature=data[definition.outer.start_byte : body.header_end].decode("utf-8"),
        docstring=body.docstring,
        class_name=".".join(classes) or None,
        decorators=definition.decorators,
        is_async=any(child.type == "async" for child in definition.node.children),
        is_generator=body.is_generator,
        def_span=Span(
            start_byte=definition.outer.start_byte,
            end_byte=body.end_byte,
            start_line=definition.outer.start_point[0] + 1,
            end_line=body.end_line,
        ),
        body_span=Span(
            start_byte=body.start_byte,
            end_byte=body.end_byte,
            start_line=body.start_line,
            end_line=body.end_line,
        ),
        body_indent=body.indent,
        body_statements=body.statements,
    )


def _kind(decorators: tuple[str, ...], in_class: bool) -> CallKind:
    if not in_class:
        return "function"
    if "staticmethod" in decorators:
        return "staticmethod"
    if "classmethod" in decorators:
        return "classmethod"
    return "method"


__all__ = [
    "extract_targets",
    "first_error_line",
    "is_excluded_decorator",
    "parse_tree",
    "python_parser",
]
