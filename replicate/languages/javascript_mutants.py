"""Mutants of a JavaScript/TypeScript target: its original file with one small edit inside the
target's body, byte-exact everywhere else (pure: tree-sitter reads, bytes out).

The operators are those of JavaScript mutation testing (Stryker's set, one edit each):
arithmetic (`+` `-` `*` `/` `%` `**`), equality (`<` to `<=` and `>=`, `===` to `!==`, ...),
logical (`&&` `||` `??`), bitwise, assignment (`+=` to `-=`, `??=` to `&&=`, ...), conditional
(an `if`'s condition to `true` and `false`, a loop's and a `do`'s to `false`, a ternary's to
`true` and `false`), boolean literals, string literals (`"a"` to `""`, `""` to `"x"`, a
template to ``` `` ```), array literals emptied (`[a]` and `new Array(a)`), object literals
emptied, block removal (a nested `{ ... }` to `{}`), optional chaining (`a?.b` to `a.b`, `a?.[i]`
to `a[i]`, `f?.()` to `f()`), update expressions (`++` and `--` swapped) and unary ones (`-a` to
`+a`, `~a` and `!a` to `a`). Not mutated: TypeScript's types, directives (`"use strict"`),
object keys, module specifiers, and the strings of a thrown error's message (errors are
compared by class, so those mutants would be equivalent by contract, as in `gen.mutants`).

A body of one short expression (`(x) => x * 2`) gives those operators too few sites for a kill
rate to say anything; as in `gen.mutants`, `extra=True` (asked for when the standard operators
give fewer than `FEW`) adds the call operators, a call replaced by its first argument and a
call's last argument dropped, and a returned value replaced by `undefined`.

A `Mutant` mirrors `replicate.gen.mutants.Mutant` (index, operator, line, text: the mutated
definition, which `replace_definition` puts in place) and carries its edit, so `mutant_file`
rebuilds the mutated file directly. Sites are found in source order and shuffled by `seed`, as
the Python mutator does, so the first `limit` mutants sample the whole body; each mutant's file
parses with its grammar and no two are the same.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from replicate.core import Target
from replicate.languages.javascript_extract import located_targets, parse_source
from replicate.languages.syntax import first_error_line

ARITHMETIC = {"+": "-", "-": "+", "*": "/", "/": "*", "%": "*", "**": "*"}
EQUALITY = {
    "<": ("<=", ">="),
    "<=": ("<", ">"),
    ">": (">=", "<="),
    ">=": (">", "<"),
    "==": ("!=",),
    "!=": ("==",),
    "===": ("!==",),
    "!==": ("===",),
}
LOGICAL = {"&&": "||", "||": "&&", "??": "&&"}
BITWISE = {"&": "|", "|": "&", "^": "&", "<<": ">>", ">>": "<<", ">>>": ">>"}
ASSIGNMENT = {
    "+=": "-=",
    "-=": "+=",
    "*=": "/=",
    "/=": "*=",
    "%=": "*=",
    "**=": "*=",
    "<<=": ">>=",
    ">>=": "<<=",
    "&=": "|=",
    "|=": "&=",
    "&&=": "||=",
    "||=": "&&=",
    "??=": "&&=",
}
UNARY = {"-": "+", "+": "-", "~": "", "!": ""}
UPDATE = {"++": "--", "--": "++"}
_TYPES = frozenset(
    {
        "type_annotation",
        "type_arguments",
        "type_parameters",
        "type_alias_declaration",
        "interface_declaration",
        "type_predicate_annotation",
        "asserts_annotation",
        "ambient_declaration",
        "abstract_method_signature",
    }
)
FEW = 3  # fewer standard mutants than this: the extra operators join them
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")
_MERGING = frozenset({(ord("+"), ord("+")), (ord("-"), ord("-")), (ord("/"), ord("/"))})
_MERGING |= {(ord("/"), ord("*")), (ord("*"), ord("/"))}


@dataclass(frozen=True)
class Mutant:
    index: int
    operator: str  # e.g. "arithmetic + -> -", "block removed", "optional chain ?. -> ."
    line: int  # the edit's line in the original file
    text: str  # the mutated definition (the target's def_span), as `replace_definition` takes it
    start_byte: int  # the edit: the original file's bytes start_byte..end_byte become replacement
    end_byte: int
    replacement: bytes


@dataclass(frozen=True)
class _Site:
    start: int
    end: int
    replacement: bytes
    operator: str


def mutant_file(source: bytes, mutant: Mutant) -> bytes:
    """The original file with the mutant's edit made."""
    return source[: mutant.start_byte] + mutant.replacement + source[mutant.end_byte :]


def mutants(
    source: bytes, target: Target, limit: int = 30, seed: int = 0, *, extra: bool = False
) -> list[Mutant]:
    """Up to `limit` distinct mutants of `target` in `source` (its original file), each of
    whose files parses; [] where the file does not hold the target where it says. `extra`:
    the call and return operators too (see the module docstring)."""
    function = _function_of(source, target)
    if function is None:
        return []
    body = function.child_by_field_name("body")
    if body is None:
        return []
    sites = list(_sites(source, body, extra))
    random.Random(seed).shuffle(sites)
    found: list[Mutant] = []
    seen: set[bytes] = set()
    for site in sites:
        edited = source[: site.start] + site.replacement + source[site.end :]
        if edited in seen or first_error_line(parse_source(edited, target.path)) is not None:
            continue
        seen.add(edited)
        delta = len(site.replacement) - (site.end - site.start)
        span = target.def_span
        text = edited[span.start_byte : span.end_byte + delta].decode("utf-8")
        line = source.count(b"\n", 0, site.start) + 1
        found.append(
            Mutant(len(found), site.operator, line, text, site.start, site.end, site.replacement)
        )
        if len(found) >= limit:
            break
    return found


def _function_of(source: bytes, target: Target) -> Node | None:
    tree = parse_source(source, target.path)
    for located, function in located_targets(source, tree, target.path):
        if (located.qualname, located.body_span) == (target.qualname, target.body_span):
            return function
    return None


# ---------------------------------------------------------------- sites


def _sites(source: bytes, body: Node, extra: bool = False) -> Iterator[_Site]:
    """Every applicable edit inside `body`, in source order."""
    messages = _message_ranges(body)
    for node in _walk(body):
        quiet = any(start <= node.start_byte < end for start, end in messages)
        found = _edits(node, body, quiet) + (_extra_edits(node, body) if extra else [])
        for start, end, replacement, operator in found:
            yield _Site(start, end, _joined(source, start, end, replacement), operator)


def _walk(root: Node) -> Iterator[Node]:
    """`root` and its descendants in source order, TypeScript's types left out."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _TYPES or node.type.endswith("_type"):
            continue
        yield node
        stack.extend(reversed(node.children))


def _message_ranges(body: Node) -> list[tuple[int, int]]:
    """The byte ranges of thrown errors' messages: a `throw`'s constructor or call arguments,
    or the thrown expression itself."""
    ranges = []
    for node in _walk(body):
        if node.type != "throw_statement" or not node.named_children:
            continue
        thrown = node.named_children[0]
        arguments = thrown.child_by_field_name("arguments")
        part = arguments if thrown.type in ("new_expression", "call_expression") else thrown
        if part is not None:
            ranges.append((part.start_byte, part.end_byte))
    return ranges


Edit = tuple[int, int, str, str]


def _edits(node: Node, body: Node, quiet: bool) -> list[Edit]:
    kind = node.type
    if kind == "binary_expression":
        return _binary(node)
    if kind == "augmented_assignment_expression":
        return _swap(node, ASSIGNMENT, "assignment")
    if kind == "update_expression":
        return _swap(node, UPDATE, "update")
    if kind == "unary_expression":
        return _swap(node, UNARY, "unary")
    if kind in ("if_statement", "while_statement", "do_statement", "for_statement"):
        return _condition(node)
    if kind == "ternary_expression":
        test = node.child_by_field_name("condition")
        return [] if test is None else _to_booleans(test, "ternary condition", ("true", "false"))
    if kind in ("true", "false"):
        other = "false" if kind == "true" else "true"
        return [(node.start_byte, node.end_byte, other, f"boolean {kind} -> {other}")]
    if kind in ("string", "template_string"):
        return [] if quiet else _string(node)
    if kind in ("array", "object") and node.named_children:
        return [
            (node.start_byte, node.end_byte, "[]" if kind == "array" else "{}", f"{kind} emptied")
        ]
    if kind == "new_expression":
        return _new_array(node)
    if kind == "statement_block" and node.id != body.id and node.named_children:
        return [(node.start_byte, node.end_byte, "{}", "block removed")]
    if kind == "optional_chain":
        dot = "." if node.parent is not None and node.parent.type == "member_expression" else ""
        return [(node.start_byte, node.end_byte, dot, f"optional chain ?. -> {dot or 'nothing'}")]
    return []


def _extra_edits(node: Node, body: Node) -> list[Edit]:
    """A call by its first argument, a call without its last argument, a value returned (or a
    concise arrow's body) as `undefined`."""
    found: list[Edit] = []
    returning = node.type == "return_statement" and node.named_children
    returned = node.named_children[0] if returning else None
    if node.id == body.id and node.type != "statement_block":
        returned = node
    if returned is not None and _text(returned) != "undefined":
        found.append((returned.start_byte, returned.end_byte, "undefined", "return undefined"))
    arguments = node.child_by_field_name("arguments")
    if node.type != "call_expression" or arguments is None or arguments.type != "arguments":
        return found
    items = arguments.named_children
    if not items or items[0].type == "spread_element":
        return found
    first = (node.start_byte, node.end_byte, f"({_text(items[0])})", "call -> its first argument")
    end = items[-2].end_byte if len(items) > 1 else arguments.start_byte + 1
    return [*found, first, (end, items[-1].end_byte, "", "drop argument")]


def _operator(node: Node) -> Node | None:
    found = node.child_by_field_name("operator")
    if found is not None:
        return found
    unnamed = [child for child in node.children if not child.is_named]
    return unnamed[0] if unnamed else None


def _binary(node: Node) -> list[Edit]:
    op = _operator(node)
    if op is None:
        return []
    text = _text(op)
    if text in EQUALITY:
        return [
            (op.start_byte, op.end_byte, new, f"equality {text} -> {new}") for new in EQUALITY[text]
        ]
    for table, name in ((ARITHMETIC, "arithmetic"), (LOGICAL, "logical"), (BITWISE, "bitwise")):
        if text in table:
            return [(op.start_byte, op.end_byte, table[text], f"{name} {text} -> {table[text]}")]
    return []


def _swap(node: Node, table: dict[str, str], name: str) -> list[Edit]:
    op = _operator(node)
    text = "" if op is None else _text(op)
    if op is None or text not in table:
        return []
    return [
        (op.start_byte, op.end_byte, table[text], f"{name} {text} -> {table[text] or 'nothing'}")
    ]


def _condition(node: Node) -> list[Edit]:
    test = node.child_by_field_name("condition")
    if test is None or test.type == "empty_statement":
        return []
    values = ("true", "false") if node.type == "if_statement" else ("false",)
    name = node.type.removesuffix("_statement") + " condition"
    return _to_booleans(test, name, values)


def _to_booleans(test: Node, name: str, values: tuple[str, ...]) -> list[Edit]:
    paren = test.type == "parenthesized_expression"
    return [
        (test.start_byte, test.end_byte, f"({value})" if paren else value, f"{name} -> {value}")
        for value in values
        if _text(test).strip("() \t\n") != value
    ]


def _string(node: Node) -> list[Edit]:
    parent = node.parent
    if parent is None or _is_protocol(node, parent):
        return []
    text = _text(node)
    quote = text[0]
    if node.type == "template_string":
        return (
            [] if len(text) <= 2 else [(node.start_byte, node.end_byte, "``", "template emptied")]
        )
    if len(text) <= 2:
        return [(node.start_byte, node.end_byte, f"{quote}x{quote}", 'string "" -> "x"')]
    return [(node.start_byte, node.end_byte, quote * 2, "string emptied")]


def _is_protocol(node: Node, parent: Node) -> bool:
    """A string that is syntax, not data: a directive, an object key, a module specifier."""
    if parent.type == "expression_statement":
        return True  # a directive, or a string standing alone that nothing reads
    if parent.type == "pair" and parent.child_by_field_name("key") == node:
        return True
    if parent.type in ("import_statement", "export_statement", "import_require_clause"):
        return True
    call = parent.parent if parent.type == "arguments" else None
    callee = call.child_by_field_name("function") if call is not None else None
    return callee is not None and _text(callee) in ("require", "import")


def _new_array(node: Node) -> list[Edit]:
    constructor = node.child_by_field_name("constructor")
    arguments = node.child_by_field_name("arguments")
    if constructor is None or arguments is None or _text(constructor) != "Array":
        return []
    if not arguments.named_children:
        return []
    return [(arguments.start_byte, arguments.end_byte, "()", "array emptied")]


def _joined(source: bytes, start: int, end: int, replacement: str) -> bytes:
    """`replacement` padded with a space where it would run into its neighbours as one token
    (`return!a` to `return a`, not `returna`; `a+-b` to `a- -b`, not `a--b`)."""
    data = replacement.encode("utf-8")
    before = source[start - 1] if start > 0 else None
    after = source[end] if end < len(source) else None
    if not data:
        return b" " if _merge(before, after) else b""
    lead = b" " if _merge(before, data[0]) else b""
    tail = b" " if _merge(data[-1], after) else b""
    return lead + data + tail


def _merge(left: int | None, right: int | None) -> bool:
    if left is None or right is None:
        return False
    return (left in _WORD and right in _WORD) or (left, right) in _MERGING


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")


__all__ = ["Mutant", "mutant_file", "mutants"]
