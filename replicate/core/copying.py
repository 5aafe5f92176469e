"""How much of a reference body is a copy of code the agent can see (pure, over source text).

A body is reduced to its tokens: the statements after the docstring are parsed and printed back
(`ast.unparse`, so formatting and comments do not count), then split by `tokenize` into names,
operators, numbers and strings.  The **copy ratio** of a body against one visible function is the
share of the body's tokens that lie inside some run of `RUN` consecutive tokens that also occurs,
verbatim, in that function's body; against many functions it is the highest such share, and the
function that gave it is named.  1.0: every token of the body sits in a run found in one function
the agent can read (an override that copies its parent's method); a body written from scratch
shares only short idioms and scores near 0.  Bodies shorter than `RUN` tokens score 0.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from replicate.core.parsing import PARSE_LOCK

RUN = 6  # tokens in a run; shorter runs (`self . x = x`) are idioms, not copies
KEPT = frozenset({tokenize.NAME, tokenize.OP, tokenize.NUMBER, tokenize.STRING})

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Visible:
    """One function the agent can read: where it is, and its body's tokens."""

    where: str  # "path:line name", for people
    path: str
    line: int
    tokens: tuple[str, ...]


@dataclass(frozen=True)
class Copy:
    ratio: float  # 0..1, see the module's docstring
    of: str | None  # the visible function that gave it (None: nothing shares a run)


NO_COPY = Copy(0.0, None)


@lru_cache(maxsize=8)
def parse(text: str | bytes) -> ast.Module | None:
    """The tree of a source text (None when it does not parse); the last few are kept, since
    the tasks of one file parse it again and again. Callers only read the tree."""
    try:
        with PARSE_LOCK:
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def body_tokens(node: FunctionNode) -> tuple[str, ...]:
    """The tokens of a function's body, docstring dropped, formatting normalised."""
    body = list(node.body)
    first = body[0] if body else None
    is_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    if is_doc and isinstance(first.value.value, str):  # type: ignore[union-attr]
        body = body[1:]
    try:
        text = ast.unparse(ast.Module(body=body, type_ignores=[]))
        return tuple(
            token.string
            for token in tokenize.generate_tokens(io.StringIO(text).readline)
            if token.type in KEPT
        )
    except (tokenize.TokenError, SyntaxError, ValueError, RecursionError):
        return ()


def functions(tree: ast.AST) -> Iterator[FunctionNode]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def visible_in(path: str, text: str | bytes) -> list[Visible]:
    """Every function of one source file (none when it does not parse)."""
    tree = parse(text)
    if tree is None:
        return []
    return [
        Visible(f"{path}:{node.lineno} {node.name}", path, node.lineno, body_tokens(node))
        for node in functions(tree)
    ]


def _runs(tokens: Sequence[str]) -> Iterator[tuple[str, ...]]:
    for start in range(len(tokens) - RUN + 1):
        yield tuple(tokens[start : start + RUN])


class CopyIndex:
    """The runs of many visible functions, to find the one a body copies most from (each run
    kept as its hash, each function as where it is: not their text)."""

    def __init__(self, functions: Iterable[Visible]) -> None:
        self._functions: list[tuple[str, str, int]] = []  # (where, path, line)
        self._holders: dict[int, list[int]] = {}
        for one in functions:
            number = len(self._functions)
            self._functions.append((one.where, one.path, one.line))
            for run in {hash(run) for run in _runs(one.tokens)}:
                self._holders.setdefault(run, []).append(number)

    def best(self, tokens: Sequence[str], skip: tuple[str, range] | None = None) -> Copy:
        """The highest copy ratio of `tokens` against one indexed function (not those of
        `skip`: a path and the lines of the body's own definition)."""
        if len(tokens) < RUN:
            return NO_COPY
        covered: dict[int, set[int]] = {}
        for start, run in enumerate(_runs(tokens)):
            for number in self._holders.get(hash(run), ()):
                covered.setdefault(number, set()).update(range(start, start + RUN))
        best, found = 0, None
        for number, positions in sorted(covered.items()):
            where, path, line = self._functions[number]
            if skip is not None and path == skip[0] and line in skip[1]:
                continue
            if len(positions) > best:
                best, found = len(positions), where
        return Copy(round(best / len(tokens), 4), found) if found else NO_COPY


def higher(*copies: Copy) -> Copy:
    return max(copies, key=lambda c: c.ratio, default=NO_COPY)


def target_tokens(source: str | bytes, name: str, lines: range) -> tuple[str, ...]:
    """The body tokens of the function `name` whose def starts on one of `lines`."""
    tree = parse(source)
    for node in functions(tree) if tree is not None else ():
        if node.name == name and node.lineno in lines:
            return body_tokens(node)
    return ()
