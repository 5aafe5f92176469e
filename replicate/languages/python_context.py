"""How much of a target's file a prompt shows (`replicate export --context`), for Python.

Pure: the standard library only (`ast`).

- `stub_bodies`: the file with the target's body and each other given target's body replaced by
  the stub, their signatures and docstrings kept (`--context signatures`).
- `outline`: the part of a (stubbed) file around the target: the module's own statements that are
  not definitions (docstring, imports, constants) and the one top-level statement that holds the
  target (its class for a method, the function itself otherwise); every other top-level
  definition is left out, each run of left-out lines replaced by one comment saying which lines
  (`--context class`).
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable

from replicate.core import PARSE_LOCK, Target
from replicate.languages.python_splice import STUB_BODY, stub_source, stub_spans

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def stub_bodies(source: bytes, target: Target, others: tuple[Target, ...]) -> bytes:
    """`source` with the bodies of `target` and of `others` (targets of the same file) stubbed.

    A body that holds the target's own definition is kept (stubbing it would take the target
    away); a body inside another stubbed body goes with it.  A class's bodies are its
    members' (`stub_spans`)."""
    spans = {(span.start_byte, span.end_byte) for span in stub_spans(target)}
    start, end = target.def_span.start_byte, target.def_span.end_byte
    for other in others:
        for part in stub_spans(other):
            span = (part.start_byte, part.end_byte)
            if not (span[0] <= start and end <= span[1]):
                spans.add(span)
    for first, last in spans:
        if not 0 <= first <= last <= len(source):
            raise ValueError(f"body span {first}..{last} outside the source")
    outermost: list[tuple[int, int]] = []
    for first, last in sorted(spans, key=lambda s: (s[0], -s[1])):
        if outermost and last <= outermost[-1][1]:
            continue  # inside the body before it
        outermost.append((first, last))
    result = source
    for first, last in reversed(outermost):
        result = result[:first] + STUB_BODY + result[last:]
    return result


def _statement_lines(node: ast.stmt) -> tuple[int, int]:
    """First and last line (1-based) of a top-level statement, its decorators included."""
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno, *(d.lineno for d in decorators)])
    return first, node.end_lineno or node.lineno


def _dropped_lines(tree: ast.Module, line: int) -> set[int]:
    """Lines of the top-level definitions that do not hold `line`."""
    dropped: set[int] = set()
    for node in tree.body:
        first, last = _statement_lines(node)
        if isinstance(node, _DEFINITIONS) and not first <= line <= last:
            dropped.update(range(first, last + 1))
    return dropped


def _is_filler(text: str) -> bool:
    stripped = text.strip()
    return not stripped or stripped.startswith("#")


def outline(source: bytes, target: Target) -> bytes:
    """The part of `source` (the target's original file) around the target, the target stubbed,
    as above; the comments name lines by their numbers in `source`."""
    stubbed = stub_source(source, target)
    text = stubbed.decode("utf-8")
    with PARSE_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(text.removeprefix("\ufeff"))
    lines = text.splitlines(keepends=True)
    dropped = _dropped_lines(tree, target.def_span.start_line)

    original = _original_lines(source, target)

    shown: list[str] = []
    gap: list[int] = []  # line numbers of the run being left out (filler lines included)
    for number, line in enumerate(lines, 1):
        if number in dropped or (gap and _is_filler(line)):
            gap.append(number)
            continue
        if gap:
            shown += _gap_lines([original(n) for n in gap], gap, lines)
            gap = []
        shown.append(line)
    if gap:
        shown += _gap_lines([original(n) for n in gap], gap, lines)
    return "".join(shown).encode("utf-8")


def _original_lines(source: bytes, target: Target) -> Callable[[int], int]:
    """A line's number in `source` from its number in the stubbed file (each stub one line)."""
    stubs: list[tuple[int, int]] = []  # (the stub's line in the stubbed file, lines it took)
    removed = 0
    for span in stub_spans(target):
        lines = source[span.start_byte : span.end_byte].count(b"\n")
        stubs.append((span.start_line - removed, lines))
        removed += lines

    def original(number: int) -> int:
        return number + sum(lines for line, lines in stubs if number > line)

    return original


def _gap_lines(numbers: list[int], gap: list[int], lines: list[str]) -> list[str]:
    """One comment in place of a left-out run (`numbers`: its lines as `source` numbers them);
    filler lines that end it are kept after it."""
    trailing: list[str] = []
    while gap and _is_filler(lines[gap[-1] - 1]):
        trailing.insert(0, lines[gap.pop() - 1])
    numbers = numbers[: len(gap)]
    marker = [f"# ... (lines {numbers[0]}-{numbers[-1]} of this file not shown)\n"] if gap else []
    return marker + trailing
