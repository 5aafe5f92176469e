"""Targets of one Python file, found with tree-sitter: byte-exact spans of functions and methods.

Which definitions are targets (module-level functions, methods directly in a class body) and which
are not (nested defs, dunders, properties, overloads, abstract or empty bodies, TYPE_CHECKING
blocks, names bound more than once at their level) is decided here; `python_defs` collects the
definitions and `python_body` reads a body.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

from tree_sitter import Language as TSLanguage
from tree_sitter import Node, Parser, Tree

from replicate.core import CallKind, Span, Target
from replicate.languages.python_body import Body, read_body
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
    """Every function and method target in one parsed file, in source order."""
    found = (
        _function_target(data, definition, path, module, classes)
        for definition, classes in walk_definitions(tree.root_node)
        if definition.node.type != "class_definition"
    )
    return [target for target in found if target is not None]


def walk_definitions(
    container: Node, classes: tuple[str, ...] = ()
) -> Iterator[tuple[Definition, tuple[str, ...]]]:
    """Each definition (functions and classes) bound once at its level, with the chain of
    classes it is in, in source order: a module's (through top-level if/try/with blocks) and,
    recursively, those directly in each class body outside TYPE_CHECKING."""
    for definition in collect_definitions(container, nested=not classes):
        yield definition, classes
        if definition.node.type == "class_definition" and not definition.in_type_checking:
            body = definition.node.child_by_field_name("body")
            if body is not None:
                yield from walk_definitions(body, (*classes, definition.name))


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
    return target_of(data, definition, body, path, module, classes)


def target_of(
    data: bytes,
    definition: Definition,
    body: Body,
    path: str,
    module: str,
    classes: tuple[str, ...],
) -> Target:
    """The target of one function definition whose body is `body`."""
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
        def_span=def_span(definition, body),
        body_span=Span(
            start_byte=body.start_byte,
            end_byte=body.end_byte,
            start_line=body.start_line,
            end_line=body.end_line,
        ),
        body_indent=body.indent,
        body_statements=body.statements,
    )


def def_span(definition: Definition, body: Body) -> Span:
    """A definition's whole span: from its first decorator to the end of its body."""
    return Span(
        start_byte=definition.outer.start_byte,
        end_byte=body.end_byte,
        start_line=definition.outer.start_point[0] + 1,
        end_line=body.end_line,
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
    "def_span",
    "extract_targets",
    "first_error_line",
    "is_excluded_decorator",
    "parse_tree",
    "python_parser",
    "target_of",
    "walk_definitions",
]
