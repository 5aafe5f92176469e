"""What the target's own text says about its arguments: parameters, annotations, doctest literals.

Pure: parses the recorded signature and docstring with `ast`; nothing is imported or evaluated
(doctest arguments go through `ast.literal_eval`).  Slots name argument positions the way the
runner's inputs hold them: an int for a positional argument (a method's `self` is slot 0; a
classmethod's `cls` is not passed), a str for a keyword argument.
"""

from __future__ import annotations

import ast
import dataclasses
import textwrap
from dataclasses import dataclass
from typing import Any

from replicate.core import PARSE_LOCK, Target

ParamSlot = int | str
_PROMPT = (">>> ", "... ")


def parse(text: str | bytes) -> ast.Module:
    """`ast.parse` under the lock every threaded parse shares (see `replicate.core.parsing`:
    CPython before 3.11.8 keeps the parser's recursion depth per interpreter). Every `ast.parse`
    that can run on a worker thread (gen mints on threads) goes through here."""
    with PARSE_LOCK:
        return ast.parse(text)


def parse_expression(text: str) -> ast.expr:
    with PARSE_LOCK:
        return ast.parse(text, mode="eval").body


@dataclass(frozen=True)
class Parameter:
    name: str
    annotation: ast.expr | None
    kind: str  # positional, vararg, keyword, varkw
    default: ast.expr | None = None
    posonly: bool = False  # before `/`: never passed by keyword

    def literal_default(self) -> tuple[bool, Any]:
        """`(True, value)` when the default is a plain literal (None, a bool, number, string)."""
        if self.default is None:
            return False, None
        try:
            value = ast.literal_eval(self.default)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False, None
        return type(value) in _PLAIN_DEFAULTS, value


_PLAIN_DEFAULTS = (type(None), bool, int, float, str, bytes)


@dataclass(frozen=True)
class Signature:
    positional: tuple[Parameter, ...]  # in slot order: slot n is positional[n]
    vararg: Parameter | None
    keyword: tuple[Parameter, ...]  # keyword-only
    varkw: Parameter | None

    def parameter(self, slot: ParamSlot) -> Parameter | None:
        """The parameter an argument in `slot` binds to, if the signature says."""
        if isinstance(slot, int):
            if slot < len(self.positional):
                return self.positional[slot]
            return self.vararg
        for param in (*self.positional, *self.keyword):
            if param.name == slot:
                return param
        return self.varkw

    def first_argument(self, kind: str) -> str | None:
        """The name of the first parameter after `self`: what `return <first arg>` returns."""
        params = list(self.positional[1:] if kind == "method" else self.positional)
        if params:
            return params[0].name
        if self.vararg is not None:
            return self.vararg.name
        return self.keyword[0].name if self.keyword else None


def _def_node(text: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    source = textwrap.dedent(text).rstrip()
    for attempt in (source + "\n    pass\n", source + "\n"):
        try:
            tree = parse(attempt)
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                return node
    return None


def parse_signature(target: Target) -> Signature | None:
    """The target's parameters in slot order, or None when the signature does not parse."""
    node = _def_node(target.signature)
    if node is None:
        return None
    spec = node.args
    named = [*spec.posonlyargs, *spec.args]
    defaults: list[ast.expr | None] = [None] * (len(named) - len(spec.defaults))
    defaults += spec.defaults
    positional = [_param(a, "positional", d) for a, d in zip(named, defaults, strict=True)]
    positional = [
        dataclasses.replace(p, posonly=True) if n < len(spec.posonlyargs) else p
        for n, p in enumerate(positional)
    ]
    if target.kind == "classmethod":
        positional = positional[1:]
    keyword = zip(spec.kwonlyargs, spec.kw_defaults, strict=True)
    return Signature(
        positional=tuple(positional),
        vararg=_param(spec.vararg, "vararg") if spec.vararg else None,
        keyword=tuple(_param(a, "keyword", d) for a, d in keyword),
        varkw=_param(spec.kwarg, "varkw") if spec.kwarg else None,
    )


def _param(arg: ast.arg, kind: str, default: ast.expr | None = None) -> Parameter:
    return Parameter(arg.arg, arg.annotation, kind, default)


@dataclass(frozen=True)
class DocCall:
    """A call of the target in a doctest example whose arguments are all literals."""

    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]


def doctest_sources(docstring: str | None) -> list[str]:
    """The source of each doctest example (continuation lines joined)."""
    examples: list[str] = []
    for raw in (docstring or "").splitlines():
        line = raw.strip()
        if line.startswith(_PROMPT[0]):
            examples.append(line[4:])
        elif line.startswith(_PROMPT[1]) and examples:
            examples[-1] += "\n" + line[4:]
    return examples


def doctest_calls(target: Target) -> list[DocCall]:
    """Calls `name(literal, ...)` of the target in its own doctest examples."""
    found: list[DocCall] = []
    for source in doctest_sources(target.docstring):
        try:
            tree = parse(source)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _called_name(node.func) == target.name:
                call = _literal_call(node)
                if call is not None:
                    found.append(call)
    return found


def doctest_literals(target: Target) -> list[Any]:
    """Every literal constant in the doctest examples and the docstring's expected outputs."""
    values: list[Any] = []
    lines = (target.docstring or "").splitlines()
    texts = [*doctest_sources(target.docstring), *(ln.strip() for ln in lines if ln.strip())]
    for text in texts:
        try:
            tree = parse(text)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant):
                values.append(node.value)
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
                inner = node.operand
                number = inner.value if isinstance(inner, ast.Constant) else None
                if isinstance(number, int | float) and not isinstance(number, bool):
                    values.append(-number)
    return [v for v in values if type(v) in (int, float, str, bytes)]


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _literal_call(node: ast.Call) -> DocCall | None:
    try:
        args = tuple(ast.literal_eval(a) for a in node.args)
        kwargs = tuple((k.arg, ast.literal_eval(k.value)) for k in node.keywords if k.arg)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if any(isinstance(a, ast.Starred) for a in node.args) or any(
        k.arg is None for k in node.keywords
    ):
        return None
    return DocCall(args, tuple((str(k), v) for k, v in kwargs))
