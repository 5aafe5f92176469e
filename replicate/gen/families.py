"""The families of degenerate programs a task is graded against at gen (docs/design.md §4).

Each family is a body of one statement an agent could write without reading the task:

- the stub's own (``raise NotImplementedError``), ``return None`` and ``raise <T>``;
- the **identity** on each named parameter, positional or keyword-only: ``return <p>`` (named so for
  the first argument after ``self``, ``return parameter <p>`` for the others).  A method's ``self``
  is one of them: fluent methods, ``__enter__`` and ``__iter__`` return it, and the comparison of
  the arguments after the call already tells a method that should have changed ``self`` from one
  that did not.  A classmethod's ``cls`` is not (it is not an argument the caller passes), nor
  ``*args`` and ``**kwargs`` (no one value of the caller's);
- each named parameter's **empty value**, of the type of the argument as the call passes it:
  ``return <p>.__class__()``, named ``return empty <p>`` ('' for a str, [] for a list, 0 for an int,
  None for None; a class whose constructor needs arguments raises).  Not ``self``'s: a fresh empty
  receiver is not an answer one writes blind, and its class call is often one a test never makes;
- **constants**: the `CONSTANTS` values the reference returns most often, and the empty value of the
  type it returns most often ('' when it mostly returns strings, 0 for ints, [] for lists).

The first argument's identity, None and a raise are held to the floor `MAX_BASELINE` (0.5), the
other identities, the empty values and the constants to `MAX_CONSTANT_BASELINE` (0.9, `PARTIAL`);
all of them set the baseline.  The stub's, ``return None``'s, ``raise``'s and the constants'
outcomes are read off the stub's where they can be (`replicate.gen.baseline.derived_outcomes`); the
identities and the empty values always run, in the target's sessions like every other program of
gen.  Each has, beside it, a lookup table of the visible calls
(`replicate.gen.baseline.summarise`).
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from replicate.batch import StoredOutcome
from replicate.core import Target
from replicate.inputs import parse_signature
from replicate.values import canonical, plain, render

Outcome = StoredOutcome  # stored, or made up for a degenerate program
CONSTANTS = 5  # the most common expected return values tried as constant programs
CONSTANT = "return constant"  # how their names start
IDENTITY = "return parameter"  # the identity on a parameter other than the first argument
EMPTY = "return empty"  # a parameter's empty value
# Families held to the constants' floor (`replicate.grading.MAX_CONSTANT_BASELINE`), not to the
# floor of None, the first argument and a raise: a function whose branches each return one of
# its parameters (a clamp, the larger of two) is a task, and no input can pull every branch's
# identity under 0.5 when the visible calls' table answers the traced ones (one of three
# branches is right on a third of the rest: (1 + 2.5/3) / 3.5 = 0.52).
PARTIAL = (CONSTANT, IDENTITY, EMPTY)
MAX_LITERAL = 200  # a constant run in the jail is written as a literal at most this long
# The empty value of a returned value's type, by the tag of its encoding.
EMPTY_BY_TAG: Mapping[str, Any] = {
    "str": {"t": "str", "v": ""},
    "bytes": {"t": "bytes", "v": ""},
    "list": {"t": "list", "v": []},
    "tuple": {"t": "tuple", "v": []},
    "dict": {"t": "dict", "v": []},
    "set": {"t": "set", "v": []},
    "frozenset": {"t": "frozenset", "v": []},
    "int": {"t": "int", "v": "0"},
    "float": {"t": "float", "v": float.hex(0.0)},
    "bool": {"t": "bool", "v": False},
}
_LITERAL_TYPES = (type(None), bool, int, float, str, bytes, list, tuple, dict)


@dataclass(frozen=True)
class Program:
    """A degenerate program to run in the jail: its name, and the statement that replaces the
    body."""

    name: str
    body: str


def identities(target: Target) -> list[Program]:
    """``return <p>`` for each named parameter (``self`` included), the first argument after
    ``self`` first (``return <first argument>``, or ``*args`` when that is all there is)."""
    signature = parse_signature(target)
    if signature is None:
        return []
    first = signature.first_argument(target.kind)
    names = [p.name for p in (*signature.positional, *signature.keyword)]
    found = [Program(f"return {first}", f"return {first}")] if first else []
    others = [name for name in dict.fromkeys(names) if name != first]
    return found + [Program(f"{IDENTITY} {name}", f"return {name}") for name in others]


def empties(target: Target) -> list[Program]:
    """``return <p>.__class__()`` for each named parameter but a method's ``self``."""
    signature = parse_signature(target)
    if signature is None:
        return []
    positional = signature.positional[1:] if target.kind == "method" else signature.positional
    names = [p.name for p in (*positional, *signature.keyword)]
    return [Program(f"{EMPTY} {name}", f"return {name}.__class__()") for name in names]


def common_values(expected: Iterable[Outcome]) -> list[Any]:
    """The constants: the `CONSTANTS` most common returned values (tagged, most common first),
    then the empty value of the type returned most often (`EMPTY_BY_TAG`), if not among them."""
    counts: Counter[str] = Counter()
    tags: Counter[str] = Counter()
    first: dict[str, Any] = {}
    for outcome in expected:
        if outcome.get("status") != "returned":
            continue
        value = outcome.get("value")
        key = canonical(value)
        counts[key] += 1
        first.setdefault(key, value)
        tag = value.get("t") if isinstance(value, Mapping) else None
        if isinstance(tag, str) and tag in EMPTY_BY_TAG:
            tags[tag] += 1
    found = [first[key] for key, _ in counts.most_common(CONSTANTS)]
    if tags:
        empty = EMPTY_BY_TAG[tags.most_common(1)[0][0]]
        found += [empty] if canonical(empty) not in {canonical(v) for v in found} else []
    return found


def constant_name(value: Any) -> str:
    return f"{CONSTANT} {render(value, 60)}"


def constant_programs(expected: Iterable[Outcome]) -> list[Program]:
    """The constants as programs to run, where their outcomes cannot be read off the stub's:
    those whose value a short literal writes (`literal`)."""
    found = []
    for value in common_values(expected):
        text = literal(value)
        if text is not None:
            found.append(Program(constant_name(value), f"return {text}"))
    return found


def literal(value: Any) -> str | None:
    """Python source of a tagged plain value whose literal reads back as the same value (None,
    bools, numbers, strings, bytes, lists, tuples, dicts of them), at most `MAX_LITERAL` long."""
    try:
        decoded = plain.decode(value)
    except plain.NotPlain:
        return None
    if not _literal_only(decoded):
        return None
    text = repr(decoded)
    if len(text) > MAX_LITERAL:
        return None
    try:
        same = ast.literal_eval(text) == decoded and repr(ast.literal_eval(text)) == text
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return text if same else None


def _literal_only(value: Any) -> bool:
    if type(value) not in _LITERAL_TYPES:
        return False
    if type(value) is float and value != value:
        return False  # nan: no literal
    if type(value) in (list, tuple):
        return all(_literal_only(item) for item in value)
    if type(value) is dict:
        return all(_literal_only(k) and _literal_only(v) for k, v in value.items())
    return True


def programs(target: Target) -> list[Program]:
    """The identities and the empty values, each once (by body)."""
    found = {p.body: p for p in (*identities(target), *empties(target))}
    return list(found.values())
