"""Text-level helpers of splicing: markdown fences, indentation, string-literal lines (pure)."""

from __future__ import annotations

import io
import re
import tokenize

from replicate.core import fenced_blocks

PYTHON_TAGS = frozenset({"python", "py", "python3", "py3"})


def strip_fences(text: str) -> str:
    """The first python-tagged fenced block of a markdown text (else its largest block).

    Text without a fenced block comes back unchanged. An unclosed fence runs to the end.
    """
    blocks = fenced_blocks(text)
    if not blocks:
        return text
    tagged = [block.code for block in blocks if block.tag in PYTHON_TAGS]
    if tagged:
        return tagged[0]
    return max((block.code for block in blocks), key=len)


def leading_space(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t\f"))]


def reindent(text: str, start: int, end: int, indent: str) -> list[str]:
    """Lines `start..end` (1-based) of `text`, moved from their own indentation to `indent`.

    Lines inside a multi-line string literal are left alone (their text is the string's value),
    and so are blank ones.
    """
    lines = text.split("\n")[start - 1 : end]
    inside_strings = _string_interior_lines(text)
    base = leading_space(lines[0])
    moved: list[str] = []
    for number, line in enumerate(lines, start):
        if number in inside_strings or not line.strip():
            moved.append(line)
        elif line.startswith(base):
            moved.append(indent + line[len(base) :])
        else:
            moved.append(indent + line.lstrip(" \t\f"))
    return moved


def dedent_code(text: str) -> str:
    """`text` with the indentation common to its code lines removed.

    Unlike `textwrap.dedent`, lines inside multi-line string literals keep their text (it is the
    string's value), and comment lines do not limit the common indentation.
    """
    lines = text.split("\n")
    inside_strings = _string_interior_lines(text)
    code = [
        index
        for index, line in enumerate(lines, 1)
        if index not in inside_strings and line.strip() and not line.lstrip().startswith("#")
    ]
    if not code:
        return text
    prefix = _common_prefix([leading_space(lines[index - 1]) for index in code])
    if not prefix:
        return text
    out = [
        line[len(prefix) :] if index not in inside_strings and line.startswith(prefix) else line
        for index, line in enumerate(lines, 1)
    ]
    return "\n".join(out)


def _common_prefix(texts: list[str]) -> str:
    shortest, longest = min(texts), max(texts)
    for index, char in enumerate(shortest):
        if char != longest[index]:
            return shortest[:index]
    return shortest


def _string_interior_lines(text: str) -> set[int]:
    """1-based numbers of lines that continue a string literal begun on an earlier line."""
    interior: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                interior.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        return interior
    return interior


_TAB_INDENT = re.compile(r"^ *[\t\f]", re.MULTILINE)


def edited_region(text: str, original: str, first: int, last: int) -> str | None:
    """Where `text` is `original` with only its lines `first..last` (1-based) replaced, and every
    replacing line that is not blank starts with the indentation of `original`'s line `first`:
    the replacing lines with that indentation taken off (blank ones emptied), as a module of
    their own.  None otherwise, and for text indented with tabs or form feeds anywhere (whose
    columns depend on their neighbours').

    Where that module parses, `text` parses as `original` with those lines' statements in the
    place of the old ones, and every statement outside them unchanged: the lines before end a
    statement (a definition starts at `first`), the replacing ones leave no bracket, string or
    continuation open (they parse alone), and lie at the indentation of the block they replace
    or deeper, so the lines after close the same blocks as in `original`."""
    if _TAB_INDENT.search(text) is not None:
        return None
    lines, old = text.split("\n"), original.split("\n")
    before, after = old[: first - 1], old[last:]
    middle = len(lines) - len(after)
    if middle < len(before) or lines[: len(before)] != before or lines[middle:] != after:
        return None
    indent = leading_space(old[first - 1]) if first <= len(old) else ""
    out: list[str] = []
    for line in lines[len(before) : middle]:
        if not line.strip(" "):
            out.append("")
        elif line.startswith(indent):
            out.append(line[len(indent) :])
        else:
            return None
    return "\n".join(out)
