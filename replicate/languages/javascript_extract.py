"""Targets of one JavaScript or TypeScript file, found with tree-sitter: byte-exact spans.

Targets: named function declarations (generators and async ones too), arrow functions and function
expressions bound to a name (`const`/`let`/`var`, `exports.x =`, `module.exports.x =`), and the
methods of top-level classes (`static` ones are `staticmethod`), exported or not. Not targets, as
their Python counterparts are not: constructors (like `__init__`), getters and setters (like
properties), `#private` methods (like mangled names), bodiless signatures (TypeScript overloads,
abstract methods), empty bodies, nested definitions and names bound more than once at their level.

A target's `body_span` is the whole body: the `{ ... }` block with its braces, or the expression
of a concise arrow (`=> expr`). Its `module` is the file's repo-relative path without its
extension (`classes/semver`); its `docstring` is the `/** ... */` comment right before it (one
blank line between them allowed).
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath

from tree_sitter import Language as TSLanguage
from tree_sitter import Node, Parser, Tree

from replicate.core import CallKind, Span, Target

JS_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx")
TS_SUFFIXES = (".ts", ".mts", ".cts", ".tsx")
FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
FUNCTION_DECLARATIONS = frozenset({"function_declaration", "generator_function_declaration"})
CLASSES = frozenset({"class_declaration", "abstract_class_declaration"})
_SKIPPED_METHOD_WORDS = frozenset({"get", "set"})


@functools.lru_cache(maxsize=3)
def _parser(grammar: str) -> Parser:
    """The tree-sitter parser of one grammar ("javascript", "typescript", "tsx"), built on use."""
    if grammar == "javascript":
        import tree_sitter_javascript

        return Parser(TSLanguage(tree_sitter_javascript.language()))
    import tree_sitter_typescript

    factory = {
        "typescript": tree_sitter_typescript.language_typescript,
        "tsx": tree_sitter_typescript.language_tsx,
    }[grammar]
    return Parser(TSLanguage(factory()))


def grammar_for(path: str) -> str:
    """The grammar that parses the file at `path`, by its extension (JavaScript by default)."""
    if path.endswith(".tsx"):
        return "tsx"
    return "typescript" if path.endswith(TS_SUFFIXES) else "javascript"


def parse_source(data: bytes, path: str) -> Tree:
    return _parser(grammar_for(path)).parse(data)


def module_name(path: str) -> str:
    """`lib/index` for `lib/index.js`: the repo-relative path without its extension."""
    pure = PurePosixPath(path)
    return str(pure.with_suffix("")) if pure.suffix else path


@dataclass(frozen=True)
class Found:
    """One definition before it becomes a target: its outer node (with `export`, the declaration
    and the decorators), the function node that holds the body, its name and class."""

    outer: Node  # where the definition starts: `export`, `const` or its first decorator
    function: Node
    name: str
    class_name: str | None = None


def extract_targets(data: bytes, tree: Tree, path: str) -> list[Target]:
    """Every target of one parsed file, in source order."""
    return [target for target, _ in located_targets(data, tree, path)]


def located_targets(data: bytes, tree: Tree, path: str) -> list[tuple[Target, Node]]:
    """Every target of one parsed file with its function node (the function declaration, the
    arrow or function expression, or the method definition), in source order."""
    found = list(_top_level(tree.root_node))
    counts = Counter((item.class_name, item.name) for item in found)
    located = []
    for item in found:
        if counts[(item.class_name, item.name)] != 1:
            continue
        target = _target(data, item, path)
        if target is not None:
            located.append((target, item.function))
    return located


def top_level_names(tree: Tree) -> frozenset[str]:
    """The names a file binds at its top level (functions, classes, variables, exports.x)."""
    names: set[str] = set()
    for statement in _statements(tree.root_node):
        if statement.type in FUNCTION_DECLARATIONS | CLASSES:
            names.add(_text(statement.child_by_field_name("name")))
        elif statement.type in ("lexical_declaration", "variable_declaration"):
            for declarator in statement.named_children:
                if declarator.type == "variable_declarator":
                    names.add(_text(declarator.child_by_field_name("name")))
        else:
            names.update(item.name for item in _assigned(statement, statement))
    return frozenset(name for name in names if name)


def _statements(program: Node) -> list[Node]:
    """Top-level statements, an `export` unwrapped to its declaration."""
    out = []
    for statement in program.named_children:
        declaration = statement.child_by_field_name("declaration")
        out.append(
            declaration if statement.type == "export_statement" and declaration else statement
        )
    return out


def _top_level(program: Node) -> list[Found]:
    found: list[Found] = []
    for statement in program.named_children:
        inner = statement
        if statement.type == "export_statement":
            inner = statement.child_by_field_name("declaration") or statement
        if inner.type in FUNCTION_DECLARATIONS:
            found.append(Found(statement, inner, _text(inner.child_by_field_name("name"))))
        elif inner.type in ("lexical_declaration", "variable_declaration"):
            found.extend(_declared(statement, inner))
        elif inner.type in CLASSES:
            found.extend(_methods(inner))
        else:
            found.extend(_assigned(statement, inner))
    return found


def _declared(outer: Node, declaration: Node) -> list[Found]:
    """Functions bound by `const`/`let`/`var`; a definition after the first declarator of its
    statement starts at its own name."""
    found = []
    declarators = [c for c in declaration.named_children if c.type == "variable_declarator"]
    for index, declarator in enumerate(declarators):
        value = declarator.child_by_field_name("value")
        name = declarator.child_by_field_name("name")
        if value is None or value.type not in FUNCTION_VALUES or name is None:
            continue
        if name.type == "identifier":
            found.append(Found(declarator if index else outer, value, _text(name)))
    return found


def _assigned(outer: Node, statement: Node) -> list[Found]:
    """`exports.x = function ...` and `module.exports.x = (...) => ...`."""
    if statement.type != "expression_statement" or not statement.named_children:
        return []
    assignment = statement.named_children[0]
    if assignment.type != "assignment_expression":
        return []
    left = assignment.child_by_field_name("left")
    right = assignment.child_by_field_name("right")
    if left is None or right is None or left.type != "member_expression":
        return []
    owner = _text(left.child_by_field_name("object"))
    if owner not in ("exports", "module.exports") or right.type not in FUNCTION_VALUES:
        return []
    return [Found(outer, right, _text(left.child_by_field_name("property")))]


def _methods(cls: Node) -> list[Found]:
    body = cls.child_by_field_name("body")
    class_name = _text(cls.child_by_field_name("name"))
    if body is None or not class_name:
        return []
    found = []
    decorators: list[Node] = []
    for member in body.named_children:
        if member.type == "decorator":
            decorators.append(member)
            continue
        if member.type == "method_definition":
            start = decorators[0] if decorators else member
            found.append(
                Found(start, member, _text(member.child_by_field_name("name")), class_name)
            )
        decorators = []
    return found


def _target(data: bytes, item: Found, path: str) -> Target | None:
    function = item.function
    body = function.child_by_field_name("body")
    if body is None or not _is_candidate(item):
        return None
    statements = _statement_count(body)
    if statements == 0:
        return None
    start = item.outer
    words = {child.type for child in function.children}
    signature = data[start.start_byte : body.start_byte].decode("utf-8").rstrip()
    close = _closing(body)
    return Target(
        path=path,
        module=module_name(path),
        qualname=f"{item.class_name}.{item.name}" if item.class_name else item.name,
        kind=_kind(item),
        signature=signature,
        docstring=_doc_comment(start),
        class_name=item.class_name,
        decorators=tuple(_text(child) for child in _decorators(start, function)),
        is_async="async" in words,
        is_generator="*" in words or "generator" in function.type,
        def_span=_span(start.start_byte, close.end_byte, start.start_point[0], close.end_point[0]),
        body_span=_span(body.start_byte, close.end_byte, body.start_point[0], close.end_point[0]),
        body_indent=_line_indent(data, start.start_byte),
        body_statements=statements,
    )


def _closing(body: Node) -> Node:
    """The body's last node: a block's `}` (the block may hold a comment after it, when it ends
    its statement without `;`), or the expression."""
    if body.type == "statement_block":
        braces = [child for child in body.children if child.type == "}"]
        if braces:
            return braces[-1]
    return body


def _is_candidate(item: Found) -> bool:
    if item.class_name is None:
        return bool(item.name)
    name_node = item.function.child_by_field_name("name")
    if name_node is None or name_node.type == "private_property_identifier":
        return False
    words = {child.type for child in item.function.children}
    return item.name != "constructor" and not words & _SKIPPED_METHOD_WORDS


def _kind(item: Found) -> CallKind:
    if item.class_name is None:
        return "function"
    return "staticmethod" if any(c.type == "static" for c in item.function.children) else "method"


def _statement_count(body: Node) -> int:
    if body.type != "statement_block":
        return 1
    return sum(1 for child in body.named_children if child.type != "comment")


def _decorators(start: Node, function: Node) -> list[Node]:
    if start.id == function.id:
        return [child for child in function.children if child.type == "decorator"]
    out = []
    node: Node | None = start
    while node is not None and node.type == "decorator":
        out.append(node)
        node = node.next_named_sibling
    return out


def _doc_comment(start: Node) -> str | None:
    previous = start.prev_sibling
    if previous is None or previous.type != "comment":
        return None
    text = _text(previous)
    if not text.startswith("/**") or start.start_point[0] - previous.end_point[0] > 2:
        return None
    return text


def _line_indent(data: bytes, at: int) -> str:
    line_start = data.rfind(b"\n", 0, at) + 1
    line = data[line_start:at]
    return line[: len(line) - len(line.lstrip())].decode("utf-8")


def _span(start_byte: int, end_byte: int, start_row: int, end_row: int) -> Span:
    return Span(
        start_byte=start_byte, end_byte=end_byte, start_line=start_row + 1, end_line=end_row + 1
    )


def _text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")
