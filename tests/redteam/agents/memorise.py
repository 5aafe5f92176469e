"""Catalogue item 16, read straight off the workspace: memorise the tests' literal calls.

Unlike `lookup_table.py` (which runs the tests with a probe), this agent only reads files: it
parses the workspace's test files and every docstring's doctest for direct calls of the target
with literal arguments and the results they assert (``assert f(1, 2) == 3``, the same under
``@pytest.mark.parametrize`` rows, ``with pytest.raises(ValueError): f(0)``, ``>>> f(1, 2)``
followed by ``3``), answers those from a table and returns None elsewhere.
"""

from __future__ import annotations

import ast
import builtins
import doctest
import itertools
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import _common

Table = dict[str, tuple[str, object]]
TEST_DIRS = frozenset({"tests", "test", "testing"})
_ARITHMETIC: tuple[type[ast.AST], ...] = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant)
_ARITHMETIC += (ast.operator, ast.unaryop, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Load)


class NotLiteral(Exception):
    pass


def value(node: ast.expr, env: Mapping[str, Any]) -> Any:
    """A literal (arithmetic allowed: ``2**40``), or a parametrized name bound in `env`."""
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        pass
    expression = ast.Expression(node)
    if all(isinstance(n, _ARITHMETIC) for n in ast.walk(expression)):
        try:
            return eval(compile(expression, "<literal>", "eval"), {"__builtins__": {}})
        except Exception as exc:
            raise NotLiteral from exc
    raise NotLiteral


def target_call(node: ast.AST | None, name: str) -> ast.Call | None:
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    return node if called == name else None


def key(call: ast.Call, env: Mapping[str, Any]) -> str:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        raise NotLiteral
    args = tuple(value(a, env) for a in call.args)
    kwargs = {k.arg: value(k.value, env) for k in call.keywords}
    return repr((args, kwargs))


def exception_name(node: ast.expr) -> str | None:
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
    is_builtin = isinstance(getattr(builtins, name or "", None), type)
    return name if is_builtin and issubclass(getattr(builtins, name or ""), BaseException) else None


def asserted(stmt: ast.stmt, name: str, env: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """(key, (status, value)) pairs one statement of a test asserts."""
    if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare):
        test = stmt.test
        if len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.Is)):
            left, right = test.left, test.comparators[0]
            for call_node, other in ((left, right), (right, left)):
                call = target_call(call_node, name)
                if call is not None:
                    yield key(call, env), ("returned", value(other, env))
    if isinstance(stmt, ast.With):
        for item in stmt.items:
            raises = item.context_expr
            if isinstance(raises, ast.Call) and getattr(raises.func, "attr", "") == "raises":
                error = exception_name(raises.args[0]) if raises.args else None
                for inner in stmt.body if error else []:
                    call = target_call(getattr(inner, "value", None), name)
                    if call is not None:
                        yield key(call, env), ("raised", error)


def bindings(fn: ast.FunctionDef) -> list[dict[str, Any]]:
    """One environment per combination of the function's parametrize rows (one empty one)."""
    grids: list[list[dict[str, Any]]] = []
    for deco in fn.decorator_list:
        if not (isinstance(deco, ast.Call) and getattr(deco.func, "attr", "") == "parametrize"):
            continue
        names_node, rows_node = deco.args[:2]
        names = value(names_node, {})
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        rows: list[dict[str, Any]] = []
        for row in getattr(rows_node, "elts", []):
            if isinstance(row, ast.Call) and getattr(row.func, "attr", "") == "param":
                row = ast.Tuple(elts=row.args, ctx=ast.Load()) if len(names) > 1 else row.args[0]
            try:
                items = [value(e, {}) for e in row.elts] if len(names) > 1 else [value(row, {})]
            except (NotLiteral, AttributeError):
                continue
            rows.append(dict(zip(names, items, strict=False)))
        grids.append(rows)
    return [
        dict(pair for env in combo for pair in env.items()) for combo in itertools.product(*grids)
    ]


def from_test_file(tree: ast.Module, name: str) -> Table:
    table: Table = {}
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    for fn in functions:
        try:
            envs = bindings(fn)
        except (NotLiteral, ValueError, TypeError):
            envs = [{}]
        for env in envs:
            for stmt in ast.walk(fn):
                try:
                    table.update(asserted(stmt, name, env))  # type: ignore[arg-type]
                except NotLiteral:
                    continue
    return table


def from_doctests(tree: ast.Module, name: str) -> Table:
    table: Table = {}
    parser = doctest.DocTestParser()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)):
            continue
        docstring = ast.get_docstring(node)
        for example in parser.get_examples(docstring or ""):
            try:
                call = target_call(ast.parse(example.source, mode="eval").body, name)
                if call is None:
                    continue
                if example.exc_msg is not None:
                    error = example.exc_msg.split(":")[0].strip().rsplit(".", 1)[-1]
                    if exception_name(ast.Name(id=error)):
                        table[key(call, {})] = ("raised", error)
                    continue
                table[key(call, {})] = ("returned", ast.literal_eval(example.want.strip()))
            except (NotLiteral, SyntaxError, ValueError):
                continue
    return table


def is_test_file(path: Path, root: Path) -> bool:
    rel = path.relative_to(root)
    name = rel.name
    named = name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
    return named or any(part in TEST_DIRS for part in rel.parts[:-1])


def memorised(root: Path, name: str) -> Table:
    table: Table = {}
    for path in sorted(root.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text("utf-8"))
        except (SyntaxError, UnicodeDecodeError, OSError):
            continue
        if is_test_file(path, root):
            table.update(from_test_file(tree, name))
        table.update(from_doctests(tree, name))
    return table


def main() -> None:
    table = memorised(_common.workspace(), _common.target_name())
    print(f"memorised {len(table)} calls")
    _common.table_candidate(table)


if __name__ == "__main__":
    main()
