"""A recalled body in disguise: the original definition with its local names renamed, its string
literals changed and its layout redone (for the memorisation signal's tests and bench).

The parameters keep their names (a caller may pass them by keyword) and so do globals,
attributes and keyword arguments (renaming them would reach other objects): what a copier can
change without changing what the code reaches.  Strings change value, so a disguised copy may
answer otherwise where a string is returned; it is a measure's input, not a candidate to pass.
"""

from __future__ import annotations

import ast


class _Disguise(ast.NodeTransformer):
    def __init__(self, local: set[str]) -> None:
        self.names = {name: f"renamed_{index}" for index, name in enumerate(sorted(local))}

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = self.names.get(node.arg, node.arg)
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.ExceptHandler:
        if node.name is not None:
            node.name = self.names.get(node.name, node.name)
        self.generic_visit(node)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        if isinstance(node.value, str):
            node.value = f"<{node.value[::-1]}>"
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.JoinedStr:
        for part in node.values:  # the literal parts of an f-string; its fields are visited
            if isinstance(part, ast.FormattedValue):
                self.visit(part)
        return node


def _locals(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names the body binds (not the parameters), in it and in what it nests."""
    bound: set[str] = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store | ast.Del):
            bound.add(inner.id)
        elif isinstance(inner, ast.ExceptHandler) and inner.name:
            bound.add(inner.name)
        elif isinstance(inner, ast.arg) and inner not in _own_args(node):
            bound.add(inner.arg)  # a lambda's or a nested def's parameter
    return bound


def _own_args(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    arguments = node.args
    extra = [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, *extra]


def renamed_copy(definition: str) -> str:
    """`definition` (one def, at no indentation) disguised: locals renamed, strings changed, the
    docstring dropped, laid out again with comments and blank lines between statements."""
    tree = ast.parse(definition)
    node = tree.body[-1]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef), "one definition expected"
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        node.body = body[1:] or [ast.Pass()]
    declared = {
        name
        for inner in ast.walk(node)
        if isinstance(inner, ast.Global | ast.Nonlocal)
        for name in inner.names
    }
    _Disguise(_locals(node) - declared - {arg.arg for arg in _own_args(node)}).visit(node)
    lines = []
    for line in ast.unparse(ast.fix_missing_locations(node)).split("\n"):
        lines.append(line)
        if line.rstrip().endswith(":"):
            continue
        lines.extend(["", f"{line[: len(line) - len(line.lstrip())]}# written from memory"])
    return "\n".join(lines) + "\n"


def original_definition(source: bytes, first_line: int, last_line: int) -> str:
    """The original definition on lines `first_line..last_line` of `source`, taken out of its
    indentation (a bare def, as a completion gives it)."""
    lines = source.decode("utf-8").split("\n")[first_line - 1 : last_line]
    indent = len(lines[0]) - len(lines[0].lstrip())
    return "\n".join(line[indent:] if line[:indent].isspace() else line for line in lines) + "\n"
