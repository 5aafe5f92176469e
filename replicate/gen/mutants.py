"""Mutants of a reference function: how well does a task's grader tell right from wrong? (pure)

A mutant is the target's own definition with one small change inside its body: an operator swapped,
a comparison flipped, a constant nudged, a condition negated or removed, a statement deleted, a
return value replaced. Each mutant is a bare definition, so it goes through the same splicing and
grading as any candidate. Mutation libraries (mutmut, cosmic-ray) mutate whole files or projects
and run test suites; the need here is one function, in place, graded by our own grader, so this is
a small mutator over the `ast` tree.

A body of one short line (`return [self.__class__(v) for v in super().split(sep, maxsplit)]`)
gives those operators two sites or fewer, too few for a kill rate to say anything.  Such a body
(`extra=True`, asked for when the standard operators give fewer than `FEW`) also gets the call
operators: a call replaced by its first argument (PIT's "argument propagation") and a call's
last argument dropped.
"""

from __future__ import annotations

import ast
import copy
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from replicate.inputs import parse

_SWAPS: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Mult,
    ast.Div: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
    ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd,
    ast.BitXor: ast.BitAnd,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.And: ast.Or,
    ast.Or: ast.And,
}


@dataclass(frozen=True)
class Mutant:
    index: int
    operator: str  # e.g. "swap Add->Sub", "negate condition", "delete statement"
    line: int  # line in the original file
    text: str  # the mutated definition, as a bare `def`


Edit = Callable[[ast.AST], str | None]


def _swap_op(node: ast.AST) -> str | None:
    op = getattr(node, "op", None)
    if isinstance(node, ast.BinOp | ast.AugAssign | ast.BoolOp) and type(op) in _SWAPS:
        new = _SWAPS[type(op)]
        node.op = new()
        return f"swap {type(op).__name__}->{new.__name__}"
    if isinstance(node, ast.Compare) and type(node.ops[0]) in _SWAPS:
        old = type(node.ops[0])
        node.ops[0] = _SWAPS[old]()
        return f"swap {old.__name__}->{_SWAPS[old].__name__}"
    return None


def _nudge_constant(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Constant):
        return None
    value = node.value
    if isinstance(value, bool):
        node.value = not value
        return f"constant {value}->{not value}"
    if isinstance(value, int):
        node.value = value + 1
        return f"constant {value}->{value + 1}"
    if isinstance(value, float):
        node.value = value + 1.0
        return f"constant {value}->{value + 1.0}"
    if isinstance(value, str):
        node.value = value + "x" if value else "x"
        return "constant string changed"
    return None


def _negate_condition(node: ast.AST) -> str | None:
    if isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert):
        node.test = ast.UnaryOp(op=ast.Not(), operand=node.test)
        return "negate condition"
    return None


def _return_none(node: ast.AST) -> str | None:
    if isinstance(node, ast.Return) and node.value is not None:
        if isinstance(node.value, ast.Constant) and node.value.value is None:
            return None
        node.value = ast.Constant(value=None)
        return "return None"
    return None


EDITS: tuple[Edit, ...] = (_swap_op, _nudge_constant, _negate_condition, _return_none)
FEW = 3  # fewer standard mutants than this: the call operators join them


def _propagate_argument(node: ast.AST) -> str | None:
    """The first field of `node` holding a call with a plain first argument gets that argument
    instead of the call (`self.__class__(v)` -> `v`)."""
    for name, value in ast.iter_fields(node):
        if (
            isinstance(value, ast.Call)
            and value.args
            and not isinstance(value.args[0], ast.Starred)
        ):
            setattr(node, name, value.args[0])
            return "call -> its first argument"
    return None


def _drop_argument(node: ast.AST) -> str | None:
    """A call's last keyword argument, or else its last positional one, left out."""
    if not isinstance(node, ast.Call):
        return None
    if node.keywords and node.keywords[-1].arg is not None:
        node.keywords = node.keywords[:-1]
        return "drop keyword argument"
    if node.args and not isinstance(node.args[-1], ast.Starred):
        node.args = node.args[:-1]
        return "drop argument"
    return None


CALL_EDITS: tuple[Edit, ...] = (_propagate_argument, _drop_argument)


def _statement_lists(func: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[list[ast.stmt]]:
    for node in ast.walk(func):
        for field in ("body", "orelse", "finalbody"):
            value = getattr(node, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield value


def _body_nodes(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """Every node of the body in walk order, without the docstring (changing it changes nothing)."""
    body = func.body[1:] if func.body and _is_docstring(func.body[0]) else func.body
    return [node for stmt in body for node in ast.walk(stmt)]


def _messages(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
    """ids of the nodes that only make an exception's message (a raised exception's arguments,
    an assert's message): grading compares exception types, not messages, so changing their
    strings makes mutants equivalent by contract."""
    found: set[int] = set()
    for node in ast.walk(func):
        part = node.exc if isinstance(node, ast.Raise) else None
        part = node.msg if isinstance(node, ast.Assert) else part
        if isinstance(part, ast.Call):
            found.update(id(n) for arg in part.args for n in ast.walk(arg))
        elif part is not None:
            found.update(id(n) for n in ast.walk(part))
    return found


def _sites(
    func: ast.FunctionDef | ast.AsyncFunctionDef, edits: tuple[Edit, ...]
) -> list[tuple[str, int, int]]:
    """(kind, node position in a walk of the body, edit number) for every applicable mutation."""
    sites: list[tuple[str, int, int]] = []
    body_nodes = _body_nodes(func)
    messages = _messages(func)
    for position, node in enumerate(body_nodes):
        for number, edit in enumerate(edits):
            if edit is _nudge_constant and id(node) in messages and _is_str(node):
                continue
            if edit(copy.deepcopy(node)) is not None:
                sites.append(("edit", position, number))
    for number, stmts in enumerate(_statement_lists(func)):
        for position in range(len(stmts)):
            sites.append(("delete", number, position))
    return sites


def _is_str(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _apply(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    site: tuple[str, int, int],
    edits: tuple[Edit, ...],
) -> str | None:
    kind, a, b = site
    if kind == "delete":
        stmts = list(_statement_lists(func))[a]
        if _is_docstring(stmts[b]):
            return None
        stmts[b] = ast.Pass()
        return "delete statement"
    return edits[b](_body_nodes(func)[a])


def mutants(
    definition: str, limit: int = 30, seed: int = 0, *, extra: bool = False
) -> list[Mutant]:
    """Up to `limit` distinct mutants of one function definition (source text of the def);
    `extra`: the call operators too (see the module docstring)."""
    tree = parse(definition)
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    original = ast.unparse(func)
    edits = EDITS + CALL_EDITS if extra else EDITS
    sites = _sites(func, edits)
    random.Random(seed).shuffle(sites)
    found: list[Mutant] = []
    seen = {original}
    for site in sites:
        clone = copy.deepcopy(func)
        operator = _apply(clone, site, edits)
        if operator is None:
            continue
        ast.fix_missing_locations(clone)
        try:
            text = ast.unparse(clone)
            compile(text, "<mutant>", "exec")
        except (SyntaxError, ValueError, RecursionError):
            continue
        if text in seen:
            continue
        seen.add(text)
        found.append(Mutant(len(found), operator, _line_of(func, site), text + "\n"))
        if len(found) >= limit:
            break
    return found


def _line_of(func: ast.FunctionDef | ast.AsyncFunctionDef, site: tuple[str, int, int]) -> int:
    kind, a, b = site
    if kind == "delete":
        return int(getattr(list(_statement_lists(func))[a][b], "lineno", func.lineno))
    return int(getattr(_body_nodes(func)[a], "lineno", func.lineno))
