"""The body of one Python def, read from its tree-sitter node: docstring, statements, span."""

from __future__ import annotations

import ast
import inspect
import warnings
from dataclasses import dataclass

from tree_sitter import Node

from replicate.core import PARSE_LOCK

_SCOPES = frozenset({"function_definition", "lambda", "class_definition"})
_STRINGS = frozenset({"string", "concatenated_string"})


@dataclass(frozen=True)
class Body:
    """Where a body's code is (docstring excluded) and what it looks like.

    `header_end` is the byte after the colon that ends the def header. Lines are 1-based.
    """

    header_end: int
    start_byte: int
    start_line: int
    end_byte: int
    end_line: int
    indent: str
    statements: int
    docstring: str | None
    trivial: bool
    is_generator: bool


def read_body(data: bytes, node: Node) -> Body | None:
    """The body of a `function_definition` node; None when it has no code after its docstring."""
    block = node.child_by_field_name("body")
    if block is None:
        return None
    colons = [c for c in node.children if c.type == ":" and c.end_byte <= block.start_byte]
    statements = [child for child in block.named_children if child.type != "comment"]
    if not colons or not statements:
        return None
    docstring = docstring_of(statements[0])
    code = statements[1:] if docstring is not None else statements
    if not code:
        return None
    first, last = code[0], _last_token(code[-1])
    return Body(
        header_end=colons[-1].end_byte,
        start_byte=first.start_byte,
        start_line=first.start_point[0] + 1,
        end_byte=last.end_byte,
        end_line=last.end_point[0] + 1,
        indent=_indent(data, statements[0], colons[-1]),
        statements=len(code),
        docstring=docstring,
        trivial=all(_is_placeholder(statement) for statement in code),
        is_generator=any(_yields(statement) for statement in code),
    )


def docstring_of(statement: Node) -> str | None:
    """The cleaned value of a string-literal statement (f-strings and bytes are no docstring)."""
    if statement.type != "expression_statement" or statement.named_child_count != 1:
        return None
    literal = statement.named_children[0]
    if literal.type not in _STRINGS or literal.text is None:
        return None
    try:
        with PARSE_LOCK, warnings.catch_warnings():  # literal_eval parses: one thread at a time
            warnings.simplefilter("ignore")  # invalid escapes such as "\d" in a docstring
            value = ast.literal_eval(literal.text.decode("utf-8"))
    except (ValueError, SyntaxError, UnicodeDecodeError):
        return None
    return inspect.cleandoc(value) if isinstance(value, str) else None


def _last_token(node: Node) -> Node:
    """The last token of a statement, trailing comments (which tree-sitter may nest) skipped."""
    while True:
        children = [child for child in node.children if child.type != "comment"]
        if not children:
            return node
        node = children[-1]


def _indent(data: bytes, first: Node, colon: Node) -> str:
    if first.start_point[0] == colon.end_point[0]:
        return ""
    line_start = data.rfind(b"\n", 0, first.start_byte) + 1
    return data[line_start : first.start_byte].decode("utf-8")


def _is_placeholder(statement: Node) -> bool:
    """`pass`, `...` or `raise NotImplementedError[(...)]`: nothing to implement."""
    if statement.type == "pass_statement":
        return True
    children = statement.named_children
    if statement.type == "expression_statement":
        return len(children) == 1 and children[0].type == "ellipsis"
    if statement.type == "raise_statement" and len(children) == 1:
        raised = children[0]
        if raised.type == "call":
            raised = raised.child_by_field_name("function") or raised
        return raised.text == b"NotImplementedError"
    return False


def _yields(node: Node) -> bool:
    """A `yield` or `yield from` in `node`, not inside a nested def, lambda or class."""
    stack = [] if node.type in _SCOPES else [node]
    while stack:
        current = stack.pop()
        if current.type == "yield" and current.is_named:
            return True
        stack.extend(child for child in current.children if child.type not in _SCOPES)
    return False
