"""Module targets of one Python file: every function and method body hidden at once (task kind
`module`).

A module target's members are the file's functions and methods with code, each once: its
function and method targets (`extract_targets`) and its class targets' members
(`python_classes`: dunders and properties too); placeholders, overloads and abstract methods
stay as they are.  In source order, each member's body is what
the stub replaces (`python_splice.stub_spans`, the last first, so the spans before stay where
they are), while the imports, constants, `class` statements, class attributes, and every
member's signature and docstring stay.  A candidate is the whole file (`splice_module`): it
must bind every top-level name the stubbed file binds.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Sequence
from itertools import pairwise

from replicate.core import PARSE_LOCK, Span, SpliceError, Target, Token, body_lexemes
from replicate.languages.python_answer import extract_code
from replicate.languages.python_splice import _check_compiles, _normalised
from replicate.languages.python_splice_tree import (
    bound_names,
    find_candidate_def,
    parse_text,
    stubbed_facts,
)
from replicate.languages.python_tokens import original_tokens

MAX_NAMES_SAID = 5  # missing names a refusal lists
MIN_MODULE_MEMBERS = 2  # a file with fewer functions and methods is no module target


def file_module(
    data: bytes, path: str, module: str, targets: Sequence[Target], classes: Sequence[Target]
) -> Target | None:
    """The module target of one file: its function and method `targets` and the members of its
    `classes` (dunders and properties among them), each body once; None with fewer than
    `MIN_MODULE_MEMBERS`."""
    every = [t for t in targets if not t.members] + [m for c in classes for m in c.members]
    members = list({m.body_span.start_byte: m for m in reversed(every)}.values())
    if len(members) < MIN_MODULE_MEMBERS:
        return None
    return module_target(data, path, module, members)


def module_target(data: bytes, path: str, module: str, members: Sequence[Target]) -> Target:
    """The module target of the file `data` (at `path`, imported as `module`) whose functions
    and methods are `members`; ValueError when it has none, or two overlap."""
    ordered = sorted(members, key=lambda m: m.body_span.start_byte)
    if not ordered:
        raise ValueError(f"{path}: a module target needs a member")
    for before, after in pairwise(ordered):
        if before.body_span.end_byte > after.body_span.start_byte:
            raise ValueError(f"{path}: {before.qualname} and {after.qualname} overlap")
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    first, last = ordered[0].body_span, ordered[-1].body_span
    return Target(
        path=path,
        module=module,
        qualname=module.rsplit(".", 1)[-1],
        kind="module",
        signature="",
        docstring=_docstring(data),
        def_span=Span(start_byte=0, end_byte=len(data), start_line=1, end_line=max(1, lines)),
        body_span=Span(
            start_byte=first.start_byte,
            end_byte=last.end_byte,
            start_line=first.start_line,
            end_line=last.end_line,
        ),
        body_indent="",
        body_statements=sum(member.body_statements for member in ordered),
        members=tuple(ordered),
    )


def _docstring(data: bytes) -> str | None:
    try:
        with PARSE_LOCK, warnings.catch_warnings():  # gen extracts on worker threads
            warnings.simplefilter("ignore")
            return ast.get_docstring(ast.parse(data), clean=False)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def splice_module(
    stubbed: bytes, candidate_text: str, target: Target, *, check: bool = True
) -> bytes:
    """The target file a module candidate makes: the whole file it is (its code read as
    `extract_code` reads any answer), refused unless it binds every top-level name of the
    stubbed file; with `check`, refused unless it compiles."""
    text = _normalised(candidate_text)
    file_text = stubbed.decode("utf-8")
    bom = file_text.startswith("\ufeff")
    file_text = file_text.removeprefix("\ufeff")
    if text != file_text:
        code = extract_code(text, target)
        names = stubbed_facts(stubbed, file_text, target).names
        found = frozenset(bound_names(code.tree.body))
        missing = sorted(names - found)
        if missing:
            said = ", ".join(missing[:MAX_NAMES_SAID]) + (
                ", ..." if missing[MAX_NAMES_SAID:] else ""
            )
            raise SpliceError(f"a module task's answer is the whole file; it lacks {said}")
        text = code.text
    if check:
        _check_compiles(text, target.path)
    return (("\ufeff" if bom else "") + text).encode("utf-8")


def module_tokens(
    source: bytes, target: Target, stubbed: bytes | None = None
) -> tuple[Token, ...] | None:
    """The body tokens of every member, one after another: of the original file `source` where
    each member's span puts it (`stubbed` None), else of a candidate's file `source` where its
    definitions are (None when it does not parse)."""
    if stubbed is None:
        parts = [original_tokens(source, member) for member in target.members]
        return tuple(token for part in parts if part for token in part)
    text = source.decode("utf-8", errors="replace").removeprefix("\ufeff")
    try:
        tree = parse_text(text, "candidate")
    except SpliceError:
        return None
    found = (find_candidate_def(tree, member) for member in target.members)
    return tuple(token for node in found if node is not None for token in body_lexemes(node))
