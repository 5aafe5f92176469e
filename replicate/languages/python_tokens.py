"""The tokens of a target's body in a file that holds it: the original, or a candidate spliced
into the stubbed file (for the memorisation signal, `replicate.core.copying.recall`).

Pure.  The body is found without parsing the whole file where it can be (a large module's parse
is most of a warm grade's own time): the original's definition is where its span says; a
candidate's is read from the lines the stubbed file does not end with, found by its `def` line at
the stub's indentation.  Anything else (a whole-file candidate that changed the file after the
target) parses the file and finds the definition as the splice does.
"""

from __future__ import annotations

from replicate.core import SpliceError, Target, Token, body_lexemes
from replicate.languages.python_splice_text import leading_space
from replicate.languages.python_splice_tree import (
    DefNode,
    find_candidate_def,
    parse_text,
    stubbed_facts,
)


def original_tokens(source: bytes, target: Target) -> tuple[Token, ...] | None:
    """The body tokens of the target's definition where its span puts it in `source`."""
    lines = _text(source).split("\n")
    span = target.def_span
    return _tokens_of(lines, span.start_line - 1, span.end_line, target.name)


def candidate_tokens(spliced: bytes, stubbed: bytes, target: Target) -> tuple[Token, ...] | None:
    """The body tokens of the target's definition in `spliced` (a candidate put into `stubbed`);
    None when it holds none (it did not splice)."""
    text, old_text = _text(spliced), _text(stubbed)
    facts = stubbed_facts(stubbed, old_text, target)
    if facts.old_def is not None:
        found = _after_stub(text.split("\n"), old_text.split("\n"), facts.old_def, target)
        if found is not None:
            return found
    try:
        node = find_candidate_def(parse_text(text, "candidate"), target)
    except SpliceError:
        return None
    return None if node is None else body_lexemes(node)


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff").replace("\r\n", "\n")


def _after_stub(
    lines: list[str], old: list[str], old_def: tuple[int, int, int], target: Target
) -> tuple[Token, ...] | None:
    """The candidate's definition read where the stub's was: the file ends as the stubbed file
    does after the stub, and the last line before that end that starts the target's `def` at
    the stub's indentation starts it."""
    def_line, _, last = old_def
    after = old[last:]
    end = len(lines) - len(after)
    if end <= 0 or lines[end:] != after:
        return None
    indent = leading_space(old[def_line - 1])
    heads = (f"{indent}def {target.name}(", f"{indent}async def {target.name}(")
    if target.kind == "class":
        heads = (f"{indent}class {target.name}(", f"{indent}class {target.name}:")
    for start in range(end - 1, -1, -1):
        if lines[start].startswith(heads):
            return _tokens_of(lines, start, end, target.name)
    return None


def _tokens_of(lines: list[str], start: int, end: int, name: str) -> tuple[Token, ...] | None:
    """The body tokens of the one definition of `name` on lines `start..end` (0-based, end
    excluded), taken out of its indentation; None when they are not that."""
    if not 0 <= start < end <= len(lines):
        return None
    indent = leading_space(lines[start])
    block = [line[len(indent) :] if line.startswith(indent) else line for line in lines[start:end]]
    try:
        tree = parse_text("\n".join(block), "definition")
    except SpliceError:
        return None
    node = tree.body[-1] if tree.body else None
    if not isinstance(node, DefNode) or node.name != name:
        return None
    return body_lexemes(node)
