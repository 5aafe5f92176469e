"""How hard a task looks, from its reference and what the batch holds (pure, over source text).

Features: the reference body's size (lines, statements) and branching (cyclomatic complexity),
how much of the repository it leans on (call sites into it), how many hidden inputs of each
stratum grade it, the kill rate its inputs reached against mutants at gen time, and how much of
it is a copy of code the agent can see (`replicate.core.copying`).

Calls into the repository are counted from the syntax alone: a call whose callee is `self.x` or
`cls.x`, a name the target file defines at its top level, or a name it imports from its own
package (a relative import, or an absolute one under the target module's top-level package).

The band, from the features (thresholds below, `band`):

- **easy** at 0 or 1 points, **medium** at 2 or 3, **hard** at 4 or more;
- then one band easier (hard to medium, medium to easy) when the body is mostly a copy of a
  visible function (copy ratio >= COPIED): the agent has a template to adapt. Not easy outright:
  pasting that function verbatim earns close to nothing on the batches measured (mostly a sibling
  that does the mirror job, `bench/difficulty_copy.py`).

Points (at most 6): one each for complexity >= 4, complexity >= 8, statements >= 5, body lines
>= 12, body lines >= 30, and calls into the repository >= 2. The kill rate is shown but not
counted: it says how well the task is graded, not how hard it is to write. On batches of four real
libraries (idna, more-itertools, packaging, sortedcontainers) and the sample library, 311 tasks,
these thresholds give 56% easy, 28% medium and 16% hard.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict

from replicate.core.copying import NO_COPY, Copy, parse
from replicate.core.records import Target

Band = Literal["easy", "medium", "hard"]
BANDS: tuple[Band, ...] = ("easy", "medium", "hard")
STRATA = ("traced", "widened", "edge", "raises")

MEASURE = "1"  # changed whenever a feature, the copy ratio or the bands change: entries of a
# batch's difficulty file measured under another are measured again
COPIED = 0.8  # a body at least this much a copy is one band easier
POINTS = (  # (feature, at least): one point each
    ("complexity", 4),
    ("complexity", 8),
    ("statements", 5),
    ("body_lines", 12),
    ("body_lines", 30),
    ("repo_calls", 2),
)
MEDIUM_AT, HARD_AT = 2, 4

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


class Difficulty(BaseModel):
    """One task's features and band."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    body_lines: int  # lines of the reference body after its docstring (what the stub replaces)
    statements: int  # top-level statements of the body, docstring excluded (as gen counted)
    complexity: int  # cyclomatic: 1 + branches + boolean operators
    repo_calls: int  # call sites into the repository (see the module's docstring)
    strata: tuple[tuple[str, int], ...]  # hidden inputs per stratum
    kill_rate: float | None  # None: minted without the strength check
    copy_ratio: float  # 0..1: how much of the body is a copy of visible code
    copy_of: str | None  # the visible function it copies most from
    band: Band


def measure(
    source: str | bytes,
    target: Target,
    strata: Mapping[str, int],
    kill_rate: float | None,
    copy: Copy = NO_COPY,
) -> Difficulty:
    """The features of `target` in its original file `source`, and their band."""
    module = parse(source) or ast.Module(body=[], type_ignores=[])
    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    lines = text.splitlines()
    span = target.def_span
    own = textwrap.dedent("\n".join(lines[span.start_line - 1 : span.end_line]))
    definition = parse(own) or ast.Module(body=[], type_ignores=[])
    body_lines = target.body_span.end_line - target.body_span.start_line + 1
    complexity = _complexity(definition)
    repo_calls = _repo_calls(definition, _repo_names(module, target.module))
    return Difficulty(
        body_lines=body_lines,
        statements=target.body_statements,
        complexity=complexity,
        repo_calls=repo_calls,
        strata=tuple((name, strata.get(name, 0)) for name in STRATA),
        kill_rate=kill_rate,
        copy_ratio=copy.ratio,
        copy_of=copy.of,
        band=band(
            {
                "complexity": complexity,
                "statements": target.body_statements,
                "body_lines": body_lines,
                "repo_calls": repo_calls,
            },
            copy.ratio,
        ),
    )


def band(features: Mapping[str, int], copy_ratio: float) -> Band:
    """The band of a task's features (the module's docstring says how)."""
    points = sum(features.get(name, 0) >= least for name, least in POINTS)
    step = 2 if points >= HARD_AT else 1 if points >= MEDIUM_AT else 0
    if copy_ratio >= COPIED:
        step = max(0, step - 1)
    return BANDS[step]


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
