"""How much of a reference body is a copy of code the agent can see (pure, over source text).

A body is reduced to its tokens: the statements after the docstring are parsed and printed back
(`ast.unparse`, so formatting and comments do not count), then split by `tokenize` into names,
operators, numbers and strings.  The **copy ratio** of a body against one visible function is the
share of the body's tokens that lie inside some run of `RUN` consecutive tokens that also occurs,
verbatim, in that function's body; against many functions it is the highest such share, and the
function that gave it is named.  1.0: every token of the body sits in a run found in one function
the agent can read (an override that copies its parent's method); a body written from scratch
shares only short idioms and scores near 0.  Bodies shorter than `RUN` tokens score 0.

The same tokens, kinded (`Lexeme`), give every verdict its **memorisation signal** (`Recall`,
docs/design.md §4): how much of a candidate's body is the hidden original's, compared after
identifiers, strings, numbers and layout are normalised away, so renaming and reformatting a
recalled body does not hide it.
"""

from __future__ import annotations

import ast
import io
import keyword
import tokenize
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
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


class Lexeme(Enum):
    """What a body's token is, for normalising it (`normalised`)."""

    NAME = "name"  # an identifier: a local, a global, an attribute, a keyword argument
    KEYWORD = "keyword"  # `for`, `return`, `None`, `True` ...
    NUMBER = "number"
    STRING = "string"
    OP = "op"


Token = tuple[Lexeme, str]


def _kind(token: tokenize.TokenInfo) -> Lexeme:
    if token.type == tokenize.NAME:
        return Lexeme.KEYWORD if keyword.iskeyword(token.string) else Lexeme.NAME
    if token.type == tokenize.NUMBER:
        return Lexeme.NUMBER
    return Lexeme.STRING if token.type == tokenize.STRING else Lexeme.OP


def body_lexemes(node: FunctionNode | ast.ClassDef) -> tuple[Token, ...]:
    """The kinded tokens of a function's body, docstring dropped, formatting normalised (its
    statements printed back by `ast.unparse`: layout, comments and redundant brackets gone);
    of a class, its methods' bodies one after another (what a class task hides)."""
    if isinstance(node, ast.ClassDef):
        methods = [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        return tuple(token for method in methods for token in body_lexemes(method))
    body = list(node.body)
    first = body[0] if body else None
    is_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    if is_doc and isinstance(first.value.value, str):  # type: ignore[union-attr]
        body = body[1:]
    try:
        text = ast.unparse(ast.Module(body=body, type_ignores=[]))
        return tuple(
            (_kind(token), token.string)
            for token in tokenize.generate_tokens(io.StringIO(text).readline)
            if token.type in KEPT
        )
    except (tokenize.TokenError, SyntaxError, ValueError, RecursionError):
        return ()


def body_tokens(node: FunctionNode) -> tuple[str, ...]:
    """The tokens of a function's body, docstring dropped, formatting normalised."""
    return tuple(text for _, text in body_lexemes(node))


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


# The memorisation signal of a verdict (docs/design.md §4, "Recall").
RECALL_RUN = 10  # normalised tokens in a window; at 6, independent bodies shared 0.5 of theirs


@dataclass(frozen=True)
class Recall:
    """How much of a candidate's body is the hidden original's body.

    `copy`: the share of the candidate body's tokens that lie in some window of `RECALL_RUN`
    consecutive normalised tokens (`normalised`) also found in the original body; `run`: the
    longest run of consecutive normalised tokens the two bodies share, in tokens."""

    copy: float
    run: int


def normalised(tokens: Sequence[Token]) -> tuple[str, ...]:
    """Tokens with what a rename, a reformat or a changed literal alters taken out: every
    identifier is `N` (locals, globals, attributes alike: an alias reaches any of them), every
    string `S`, every number `0`; keywords and operators stay.  Layout and comments are
    already gone (`body_lexemes`)."""
    shown = {Lexeme.NAME: "N", Lexeme.STRING: "S", Lexeme.NUMBER: "0"}
    return tuple(shown.get(kind, text) for kind, text in tokens)


def recall(candidate: Sequence[Token], original: Sequence[Token]) -> Recall:
    """The memorisation signal of `candidate` against `original` (see `Recall`).  A candidate
    shorter than a window scores 1.0 only when it is the original, normalised, whole."""
    mine, theirs = normalised(candidate), normalised(original)
    run = longest_common_run(mine, theirs)
    if len(mine) < RECALL_RUN:
        return Recall(1.0 if mine and mine == theirs else 0.0, run)
    known = {theirs[start : start + RECALL_RUN] for start in range(len(theirs) - RECALL_RUN + 1)}
    covered = bytearray(len(mine))
    for start in range(len(mine) - RECALL_RUN + 1):
        if mine[start : start + RECALL_RUN] in known:
            covered[start : start + RECALL_RUN] = b"\x01" * RECALL_RUN
    return Recall(round(sum(covered) / len(mine), 4), run)


def longest_common_run(first: Sequence[str], second: Sequence[str]) -> int:
    """The length of the longest run of consecutive items both sequences hold: `second`'s
    suffix automaton, walked along `first` (linear in both lengths)."""
    links, lengths, moves = [-1], [0], [dict[str, int]()]
    last = 0
    for item in second:  # the automaton of every substring of `second`
        state = len(lengths)
        lengths.append(lengths[last] + 1)
        links.append(0)
        moves.append({})
        back = last
        while back != -1 and item not in moves[back]:
            moves[back][item] = state
            back = links[back]
        if back != -1:
            known = moves[back][item]
            if lengths[back] + 1 == lengths[known]:
                links[state] = known
            else:
                clone = len(lengths)
                lengths.append(lengths[back] + 1)
                links.append(links[known])
                moves.append(dict(moves[known]))
                while back != -1 and moves[back].get(item) == known:
                    moves[back][item] = clone
                    back = links[back]
                links[known] = links[state] = clone
        last = state
    best = here = state = 0
    for item in first:
        while state and item not in moves[state]:
            state = links[state]
            here = lengths[state]
        if item in moves[state]:
            state, here = moves[state][item], here + 1
        best = max(best, here)
    return best
