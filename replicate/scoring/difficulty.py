"""How hard a task looks, from what the batch holds: the reference body's size and branching,
how much of the repository it leans on, how many hidden inputs of each stratum grade it, and the
kill rate its inputs reached against mutants at gen time.  Shown per task by `replicate report`.

Calls into the repository are counted from the syntax alone: a call whose callee is `self.x` or
`cls.x`, a name the target file defines at its top level, or a name it imports from its own
package (a relative import, or an absolute one under the target module's top-level package).
"""

from __future__ import annotations

import ast
import textwrap
from collections import Counter
from dataclasses import dataclass

from replicate.batch.store import LoadedTask

BRANCHES = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.IfExp,
    ast.ExceptHandler,
    ast.With,
    ast.AsyncWith,
    ast.Assert,
    ast.comprehension,
    ast.match_case,
)
STRATA = ("traced", "widened", "edge", "raises")


@dataclass(frozen=True)
class Difficulty:
    body_lines: int  # lines of the reference body after its docstring (what the stub replaces)
    statements: int  # top-level statements of the body, docstring excluded (as gen counted)
    complexity: int  # cyclomatic: 1 + branches + boolean operators
    repo_calls: int  # call sites into the repository (see the module's docstring)
    strata: tuple[tuple[str, int], ...]  # hidden inputs per stratum
    kill_rate: float | None  # None: minted without the strength check


def difficulty(task: LoadedTask) -> Difficulty:
    target = task.hidden.target
    source = task.original_source()
    module = _parse(source)
    lines = source.decode("utf-8", "replace").splitlines()
    span = target.def_span
    definition = _parse(textwrap.dedent("\n".join(lines[span.start_line - 1 : span.end_line])))
    counts: Counter[str] = Counter(i.stratum for i in task.inputs)
    strength = task.hidden.strength
    return Difficulty(
        body_lines=target.body_span.end_line - target.body_span.start_line + 1,
        statements=target.body_statements,
        complexity=_complexity(definition),
        repo_calls=_repo_calls(definition, _repo_names(module, target.module)),
        strata=tuple((name, counts[name]) for name in STRATA),
        kill_rate=strength.kill_rate if strength is not None else None,
    )


def _parse(source: bytes | str) -> ast.Module:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return ast.Module(body=[], type_ignores=[])


def _complexity(tree: ast.AST) -> int:
    branches = sum(isinstance(node, BRANCHES) for node in ast.walk(tree))
    operators = sum(len(node.values) - 1 for node in ast.walk(tree) if isinstance(node, ast.BoolOp))
    return 1 + branches + operators


def _repo_names(module: ast.Module, dotted: str) -> frozenset[str]:
    """Names the target file defines at its top level or imports from its own package."""
    package = dotted.split(".")[0]
    names: set[str] = set()
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.ImportFrom):
            own = node.level > 0 or (node.module or "").split(".")[0] == package
            if own:
                names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == package:
                    names.add(alias.asname or alias.name.split(".")[0])
    return frozenset(names)


def _repo_calls(tree: ast.AST, names: frozenset[str]) -> int:
    found = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            root = node.func
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and (
                root.id in names or (root.id in ("self", "cls") and root is not node.func)
            ):
                found += 1
    return found
