"""The tokens of a JavaScript/TypeScript target's body in a file that holds it: the original, or
a candidate spliced into the stubbed file (the memorisation signal, `core.copying.recall`).

Pure. The file is parsed with tree-sitter and the target found as extraction finds it (by its
qualified name: `javascript_extract.located_targets`); its body's leaves are kinded as Python's
tokens are (`core.Lexeme`): identifiers are names, words of the grammar (`return`, `const`,
`this`, `null`) keywords, numbers numbers, a string, template string or regular expression one
string token, anything else an operator. Comments and layout leave no token, so reformatting a
recalled body, or commenting it, does not hide it.
"""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from replicate.core import Lexeme, Target, Token
from replicate.languages.javascript_extract import located_targets, parse_source

NAMES = frozenset(
    {
        "identifier",
        "property_identifier",
        "private_property_identifier",
        "shorthand_property_identifier",
        "shorthand_property_identifier_pattern",
        "statement_identifier",
        "type_identifier",
    }
)
STRINGS = frozenset({"string", "template_string", "regex"})
NUMBERS = frozenset({"number"})


def body_tokens(
    source: bytes, target: Target, stubbed: bytes | None = None
) -> tuple[Token, ...] | None:
    """The kinded tokens of the target's body in `source` (the original, or a candidate spliced
    into `stubbed`, which this reading does not need); None where `source` holds no one
    definition of it."""
    del stubbed  # the target is found by name in either file
    tree = parse_source(source, target.path)
    for found, function in located_targets(source, tree, target.path):
        if found.qualname == target.qualname:
            body = function.child_by_field_name("body")
            return () if body is None else tuple(_leaves(body))
    return None


def _leaves(node: Node) -> Iterator[Token]:
    if node.type == "comment":
        return
    if _is(node, STRINGS) or node.child_count == 0:
        token = _token(node)
        if token is not None:
            yield token
        return
    for child in node.children:
        yield from _leaves(child)


def _token(node: Node) -> Token | None:
    text = (node.text or b"").decode("utf-8", errors="replace")
    if not text:
        return None
    if _is(node, STRINGS):
        return Lexeme.STRING, text
    if _is(node, NUMBERS):
        return Lexeme.NUMBER, text
    if node.type in NAMES:
        return Lexeme.NAME, text
    if text.isidentifier():
        return Lexeme.KEYWORD, text
    return Lexeme.OP, text


def _is(node: Node, types: frozenset[str]) -> bool:
    """Whether `node` is a literal of `types` (TypeScript's `number` and `string` keywords are
    leaves of those names too, unnamed)."""
    return node.is_named and node.type in types
