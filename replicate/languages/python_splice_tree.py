"""What splicing reads from trees (pure, standard library only): the names a block binds,
a target's definition in a candidate and in the stubbed file, and the facts of a stubbed file a
splice needs, kept per file (`stubbed_facts`)."""

from __future__ import annotations

import ast
import hashlib
import threading
import warnings
from dataclasses import dataclass

from replicate.core import PARSE_LOCK, SpliceError, Target

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
DefNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef  # a class target's is a class


def _def_types(target: Target) -> tuple[type[ast.stmt], ...]:
    """The nodes that can define `target`: a class statement for a class, else a def."""
    return (ast.ClassDef,) if target.kind == "class" else (ast.FunctionDef, ast.AsyncFunctionDef)


def bound_names(statements: list[ast.stmt]) -> list[str]:
    """The names a block's statements bind (through if/try/with; not in functions or classes)."""
    names: list[str] = []
    for node in _flatten(statements):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Import):
            names.extend(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            names.extend(alias.asname or alias.name for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names.extend(_target_names(target))
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and not (
            isinstance(node, ast.AnnAssign) and node.value is None
        ):
            names.extend(_target_names(node.target))
    return names


def _target_names(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Tuple | ast.List):
        return [name for element in node.elts for name in _target_names(element)]
    if isinstance(node, ast.Starred):
        return _target_names(node.value)
    return []


def syntax_problem(exc: SyntaxError) -> str:
    """What a SyntaxError says, and on which line where it names one (a NUL byte names none)."""
    return exc.msg if exc.lineno is None else f"line {exc.lineno}: {exc.msg}"


def parse_text(source: str, what: str) -> ast.Module:
    """`source`'s tree; a `SpliceError` saying `what` does not parse, and where, else."""
    try:
        with PARSE_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source)
    except SyntaxError as exc:
        raise SpliceError(f"{what} does not parse: {syntax_problem(exc)}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise SpliceError(f"{what} does not parse: {type(exc).__name__}") from None


@dataclass(frozen=True)
class Stubbed:
    """What a splice needs of the stubbed file, read from its tree once: the file's top-level
    names, its imports (as `ast.dump` gives them) and `__future__` features, where new imports
    go after its docstring and `__future__` imports (0: after its leading comments), and the
    target's stubbed def (its `def` line, first line with decorators, last line)."""

    names: frozenset[str]
    imports: frozenset[str]
    features: frozenset[str]
    header_end: int
    old_def: tuple[int, int, int] | None


_STUBBED: dict[tuple[bytes, str, int], Stubbed] = {}  # the most recently used last
_STUBBED_LOCK = threading.Lock()
_STUBBED_KEPT = 4096


def stubbed_facts(stubbed: bytes, text: str, target: Target) -> Stubbed:
    """`Stubbed` of `text` (`stubbed` decoded) for `target`, kept by the file's digest: one
    stubbed file takes many candidates (a trainer's samples, a run's attempts), and its parse
    was half of a warm grade's own time; the facts are small where a large file's tree is
    megabytes, so thousands are kept."""
    digest = hashlib.blake2b(stubbed, digest_size=16).digest()
    key = (digest, target.qualname, target.def_span.start_line)
    with _STUBBED_LOCK:
        found = _STUBBED.pop(key, None)
    if found is None:
        found = _read_stubbed(parse_text(text, "stubbed file"), target)
    with _STUBBED_LOCK:
        _STUBBED[key] = found
        while len(_STUBBED) > _STUBBED_KEPT:
            del _STUBBED[next(iter(_STUBBED))]
    return found


def _read_stubbed(tree: ast.Module, target: Target) -> Stubbed:
    old = _find_stubbed_def(tree, target)
    imports = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    return Stubbed(
        names=frozenset(bound_names(tree.body)),
        imports=frozenset(ast.dump(node) for node in imports),
        features=frozenset(
            alias.name
            for node in imports
            if isinstance(node, ast.ImportFrom) and node.module == "__future__"
            for alias in node.names
        ),
        header_end=_header_end(tree),
        old_def=None if old is None else (old.lineno, first_line(old), end_line(old)),
    )


def first_line(node: DefNode) -> int:
    return min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])


def end_line(node: ast.stmt) -> int:
    return node.end_lineno if node.end_lineno is not None else node.lineno


def find_candidate_def(tree: ast.Module, target: Target) -> DefNode | None:
    """The candidate's definition of the target, or None.

    A method: the def inside `class <Name>:` (the class chain, or any tail of it), else a bare
    top-level def, else a def of that name at any depth. A function: a module-level def (the last
    one, as Python would keep it).  A class target: its class statement, found the same way.
    """
    name, types = target.name, _def_types(target)
    module_level = _flatten(tree.body)
    if target.class_name:
        chain = target.class_name.split(".")
        for start in range(len(chain)):
            found = _def_in_classes(module_level, chain[start:], name, types)
            if found is not None:
                return found
    found = _last_def(module_level, name, types)
    if found is not None or not target.class_name:
        return found
    return next(
        (node for node in ast.walk(tree) if isinstance(node, DefNode) and _named_as(node, target)),
        None,
    )


def _named_as(node: DefNode, target: Target) -> bool:
    return isinstance(node, _def_types(target)) and node.name == target.name


def _named(node: ast.AST, name: str) -> bool:
    return isinstance(node, DefNode) and node.name == name


def _flatten(statements: list[ast.stmt]) -> list[ast.stmt]:
    """Statements of a block, with those of nested if/try/with blocks in their place."""
    flat: list[ast.stmt] = []
    for node in statements:
        flat.append(node)
        if isinstance(node, ast.If | ast.With | ast.AsyncWith):
            flat.extend(_flatten(node.body + getattr(node, "orelse", [])))
        elif isinstance(node, ast.Try | ast.TryStar):
            handlers = [stmt for handler in node.handlers for stmt in handler.body]
            flat.extend(_flatten(node.body + handlers + node.orelse + node.finalbody))
    return flat


_DEFS: tuple[type[ast.stmt], ...] = (ast.FunctionDef, ast.AsyncFunctionDef)


def _last_def(
    statements: list[ast.stmt], name: str, types: tuple[type[ast.stmt], ...] = _DEFS
) -> DefNode | None:
    found = [node for node in statements if isinstance(node, types) and _named(node, name)]
    last = found[-1] if found else None
    return last if isinstance(last, DefNode) else None


def _def_in_classes(
    statements: list[ast.stmt],
    chain: list[str],
    name: str,
    types: tuple[type[ast.stmt], ...] = _DEFS,
) -> DefNode | None:
    classes = [node for node in statements if isinstance(node, ast.ClassDef)]
    for node in reversed(classes):
        if node.name != chain[0]:
            continue
        body = _flatten(node.body)
        found = (
            _last_def(body, name, types)
            if len(chain) == 1
            else _def_in_classes(body, chain[1:], name, types)
        )
        if found is not None:
            return found
    return None


def _find_stubbed_def(tree: ast.Module, target: Target) -> DefNode | None:
    """The target's def in the stubbed file: where it starts (as in the original), else by name."""
    types = _def_types(target)
    for node in ast.walk(tree):
        if (
            isinstance(node, types)
            and _named(node, target.name)
            and isinstance(node, DefNode)
            and first_line(node) == target.def_span.start_line
        ):
            return node
    module_level = _flatten(tree.body)
    if target.class_name:
        return _def_in_classes(module_level, target.class_name.split("."), target.name, types)
    return _last_def(module_level, target.name, types)


def _is_str_constant(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _header_end(tree: ast.Module) -> int:
    """The last line of the module's docstring and `__future__` imports; 0 without either."""
    body = tree.body
    end = 0
    index = 0
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and _is_str_constant(first.value):
        end, index = end_line(first), 1
    while (
        index < len(body)
        and isinstance(body[index], ast.ImportFrom)
        and getattr(body[index], "module", None) == "__future__"
    ):
        end, index = end_line(body[index]), index + 1
    return end
