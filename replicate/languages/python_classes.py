"""Class targets of one Python file: a class whose methods are hidden at once (task kind `class`).

A class is a target when its name is bound once at its level, outside `TYPE_CHECKING`, and it
defines at least one method with code in its body.  Its members are every function defined
directly in its body with code (dunders, properties and their setters, classmethods and
staticmethods included; abstract methods, overloads and placeholder bodies left out): each
member's body is what the stub replaces, while the class statement, its bases and decorators,
its attributes, nested classes, and every member's signature and docstring stay.
"""

from __future__ import annotations

from tree_sitter import Node, Tree

from replicate.core import Span, Target
from replicate.languages.python_body import read_body
from replicate.languages.python_defs import Definition, decorator_name
from replicate.languages.python_extract import def_span, target_of, walk_definitions

_NOT_MEMBERS = frozenset(
    {
        "overload",
        "abstractmethod",
        "abstractproperty",
        "abstractclassmethod",
        "abstractstaticmethod",
    }
)


def extract_classes(data: bytes, tree: Tree, path: str, module: str) -> list[Target]:
    """Every class target in one parsed file, in source order (an outer class before its
    nested ones)."""
    found = (
        class_target(data, definition, path, module, classes)
        for definition, classes in walk_definitions(tree.root_node)
        if definition.node.type == "class_definition" and not definition.in_type_checking
    )
    return [target for target in found if target is not None]


def class_target(
    data: bytes, definition: Definition, path: str, module: str, classes: tuple[str, ...]
) -> Target | None:
    """The class target of one class definition, or None when it defines no method with code."""
    body = read_body(data, definition.node)
    if body is None:
        return None
    members = _members(data, definition, path, module, (*classes, definition.name))
    if not members:
        return None
    return Target(
        path=path,
        module=module,
        qualname=".".join((*classes, definition.name)),
        kind="class",
        signature=data[definition.outer.start_byte : body.header_end].decode("utf-8"),
        docstring=body.docstring,
        class_name=".".join(classes) or None,
        decorators=definition.decorators,
        def_span=def_span(definition, body),
        body_span=Span(
            start_byte=members[0].body_span.start_byte,
            end_byte=members[-1].body_span.end_byte,
            start_line=members[0].body_span.start_line,
            end_line=members[-1].body_span.end_line,
        ),
        body_indent=body.indent,
        body_statements=sum(member.body_statements for member in members),
        members=members,
    )


def _members(
    data: bytes, definition: Definition, path: str, module: str, classes: tuple[str, ...]
) -> tuple[Target, ...]:
    """The methods defined directly in a class's body that have code, in source order."""
    block = definition.node.child_by_field_name("body")
    if block is None:
        return ()
    members: list[Target] = []
    for child in block.named_children:
        method = _method(child)
        if method is None:
            continue
        if any(decorator_name(text) in _NOT_MEMBERS for text in method.decorators):
            continue
        body = read_body(data, method.node)
        if body is not None and not body.trivial:
            members.append(target_of(data, method, body, path, module, classes))
    return tuple(members)


def _method(node: Node) -> Definition | None:
    """The function a class-body statement defines (decorated or not), or None."""
    inner = node.child_by_field_name("definition") if node.type == "decorated_definition" else node
    if inner is None or inner.type != "function_definition":
        return None
    name_node = inner.child_by_field_name("name")
    name = name_node.text.decode("utf-8") if name_node is not None and name_node.text else ""
    decorators = tuple(
        child.named_children[0].text.decode("utf-8")
        for child in node.children
        if child.type == "decorator" and child.named_children and child.named_children[0].text
    )
    return Definition(inner, node, name, decorators, in_type_checking=False)
