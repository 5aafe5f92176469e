"""How hard a task looks, from its reference and what the batch holds (pure, over source text).

Features: the reference body's size (lines, statements) and branching (cyclomatic complexity),
how much of the repository it leans on (call sites into it), how many hidden inputs of each
stratum grade it, the kill rate its inputs reached against mutants at gen time, and how much of
it is a copy of code the agent can see (`replicate.core.copying`).  Size features, so that
difficulty grows from one function to a whole class: the lines hidden (for a class, the sum of
its members' bodies), the members hidden (1 for a function or method), the calls between
members (a call in one member to another by name: `self.m(...)`, `cls.m(...)`,
`Class.m(...)`), and the median steps of the task's call sequences when it has any.

Calls into the repository are counted from the syntax alone: a call whose callee is `self.x` or
`cls.x`, a name the target file defines at its top level, or a name it imports from its own
package (a relative import, or an absolute one under the target module's top-level package).

The band, from the features (thresholds below, `band`):

- **easy** at 0 or 1 points, **medium** at 2 or 3, **hard** at 4 or more;
- then one band easier (hard to medium, medium to easy) when the body is mostly a copy of a
  visible function (copy ratio >= COPIED): the agent has a template to adapt. Not easy outright:
  pasting that function verbatim earns close to nothing on the batches measured (mostly a sibling
  that does the mirror job, `bench/difficulty_copy.py`).

Points (at most 11): one each for complexity >= 4, complexity >= 8, statements >= 5, lines
hidden >= 12, lines hidden >= 30, and calls into the repository >= 2; then the size points,
which a function or method never earns below 80 lines: lines hidden >= 80, members >= 2,
members >= 6, calls between members >= 2, sequence steps >= 8.  A class task thus earns at
least one point more than its members' features alone would give, and is rarely easy.  The kill
rate is shown but not counted: it says how well the task is graded, not how hard it is to write.
On batches of four real libraries (idna, more-itertools, packaging, sortedcontainers) and the
sample library, 311 function and method tasks, these thresholds give 56% easy, 28% medium and
16% hard, measured before the size points (which move only a body of 80 lines or more).

A curriculum goes by kind, then by points (`curriculum_key`): function, method, class, module
(`KIND_ORDER`), the fewest points first within each.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from replicate.core.copying import NO_COPY, Copy, parse
from replicate.core.records import Target, TaskKind

Band = Literal["easy", "medium", "hard"]
BANDS: tuple[Band, ...] = ("easy", "medium", "hard")
STRATA = ("traced", "widened", "edge", "raises")

MEASURE = "2"  # changed whenever a feature, the copy ratio or the bands change: entries of a
# batch's difficulty file measured under another are measured again
COPIED = 0.8  # a body at least this much a copy is one band easier
POINTS = (  # (feature, at least): one point each
    ("complexity", 4),
    ("complexity", 8),
    ("statements", 5),
    ("lines_hidden", 12),
    ("lines_hidden", 30),
    ("repo_calls", 2),
    # size: what a class (or a very long body) adds
    ("lines_hidden", 80),
    ("members", 2),
    ("members", 6),
    ("member_calls", 2),
    ("sequence_steps", 8),
)
KIND_ORDER = (TaskKind.FUNCTION, TaskKind.METHOD, TaskKind.CLASS, TaskKind.MODULE)
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

    body_lines: int  # lines of the body span after its docstring (a class: 1st member's to last's)
    statements: int  # top-level statements of the body, docstring excluded (as gen counted)
    complexity: int  # cyclomatic: 1 + branches + boolean operators
    repo_calls: int  # call sites into the repository (see the module's docstring)
    strata: tuple[tuple[str, int], ...]  # hidden inputs per stratum
    kill_rate: float | None  # None: minted without the strength check
    copy_ratio: float  # 0..1: how much of the body is a copy of visible code
    copy_of: str | None  # the visible function it copies most from
    band: Band
    # the size features (defaults: an entry written before them, measured again under MEASURE)
    kind: TaskKind = TaskKind.FUNCTION
    lines_hidden: int = 0  # lines the stub replaces (a class: each member's body, summed)
    members: int = 1  # bodies hidden (a class: its members)
    member_calls: int = 0  # call sites in one member to another member by name
    sequence_steps: int | None = None  # median steps of the task's call sequences; None: none
    points: int = 0  # the points the band was read from (the module's docstring)


def curriculum_key(found: Difficulty) -> tuple[int, int]:
    """Function, method, class, module (`KIND_ORDER`), fewest points first within a kind."""
    return KIND_ORDER.index(found.kind), found.points


def measure(
    source: str | bytes,
    target: Target,
    strata: Mapping[str, int],
    kill_rate: float | None,
    copy: Copy = NO_COPY,
    sequence_steps: Sequence[int] = (),
) -> Difficulty:
    """The features of `target` in its original file `source`, and their band;
    `sequence_steps`: the steps of each of the task's call sequences (none: not a class task,
    or minted without them)."""
    module = parse(source) or ast.Module(body=[], type_ignores=[])
    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    lines = text.splitlines()
    span = target.def_span
    own = textwrap.dedent("\n".join(lines[span.start_line - 1 : span.end_line]))
    definition = parse(own) or ast.Module(body=[], type_ignores=[])
    body_lines = target.body_span.end_line - target.body_span.start_line + 1
    complexity = _complexity(definition)
    repo_calls = _repo_calls(definition, _repo_names(module, target.module))
    parts = target.members or (target,)
    features = {
        "complexity": complexity,
        "statements": target.body_statements,
        "lines_hidden": sum(p.body_span.end_line - p.body_span.start_line + 1 for p in parts),
        "repo_calls": repo_calls,
        "members": len(parts),
        "member_calls": _member_calls(definition, target),
        "sequence_steps": _median(sequence_steps),
    }
    return Difficulty(
        body_lines=body_lines,
        statements=target.body_statements,
        complexity=complexity,
        repo_calls=repo_calls,
        strata=tuple((name, strata.get(name, 0)) for name in STRATA),
        kill_rate=kill_rate,
        copy_ratio=copy.ratio,
        copy_of=copy.of,
        band=band(features, copy.ratio),
        kind=target.task_kind,
        lines_hidden=features["lines_hidden"],
        members=features["members"],
        member_calls=features["member_calls"],
        sequence_steps=features["sequence_steps"] if sequence_steps else None,
        points=points(features),
    )


def points(features: Mapping[str, int]) -> int:
    """The points of a task's features (`POINTS`; a feature missing counts as 0)."""
    return sum(features.get(name, 0) >= least for name, least in POINTS)


def band(features: Mapping[str, int], copy_ratio: float) -> Band:
    """The band of a task's features (the module's docstring says how)."""
    earned = points(features)
    step = 2 if earned >= HARD_AT else 1 if earned >= MEDIUM_AT else 0
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


def _median(values: Sequence[int]) -> int:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else 0


def _member_calls(definition: ast.Module, target: Target) -> int:
    """Call sites in one member of a class target to another member, by name (`self.m()`,
    `cls.m()`, `Class.m()`); 0 for a function or method."""
    names = {member.name for member in target.members}
    classes = [node for node in definition.body if isinstance(node, ast.ClassDef)]
    if not names or not classes:
        return 0
    owners = {"self", "cls", target.name}
    found = 0
    for node in classes[0].body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.name not in names:
            continue
        for call in ast.walk(node):
            func = call.func if isinstance(call, ast.Call) else None
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id in owners
                and func.attr in names
                and func.attr != node.name
            ):
                found += 1
    return found
