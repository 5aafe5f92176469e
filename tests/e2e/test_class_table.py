"""Red team, class tasks: a class that answers the visible tests' calls from a lookup table and
returns None elsewhere earns < MAX_DEGENERATE_REWARD normalised on every class task of the
session's boltons batch (`tests/e2e/conftest.py`), because gen graded the degenerate classes
behind such a table (`replicate.gen.class_families`), on the members' inputs and the call
sequences as a candidate is, and the baseline holds them.

The attacker is given more than the workspace shows: the exact arguments of every visible call
(a probe class, run once, raises each call's `repr(arguments)` as its exception's message) and the
reference's answers to them.  Each member of the table class computes the same key from its own
arguments and returns the recorded value (a literal, or an instance of the task's own class built
from its recorded fields), or raises the recorded builtin exception; None on any other call.  How
many visible calls it answers as the reference does is counted from a run of it (`answered`).
The positive control: with the normalisation off (its raw reward), the same class earns above
the limit on some class task.  Beside it, the reward it would earn against the baseline of the
methods' own degenerate programs alone (before the families) is printed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from replicate.batch.store import Batch, LoadedTask
from replicate.cache import cache_root
from replicate.core import CallInput, Target, TaskKind
from replicate.gen.class_families import with_bodies
from replicate.gen.classes import EACH_METHOD
from replicate.gen.families import literal
from replicate.grading import Refusal, compare_outcome, grade_text, normalise, run_candidate
from replicate.grading.reward import MAX_DEGENERATE_REWARD
from replicate.jail import Jail
from replicate.jail.context import context_for
from replicate.sandbox import get_sandbox
from tests.e2e.conftest import Minted


def _arguments(member_kind: str) -> str:
    """An expression of a member's own arguments (its receiver left out), from its body's start."""
    skip = 0 if member_kind == "staticmethod" else 1
    return f"repr(list(locals().values())[{skip}:])"


def _probe(task: LoadedTask) -> str:
    """A class whose members that the visible calls call raise LookupError(<their arguments'
    key>), but its plumbing (`_or_init`); the others return None."""
    called = {item.member for item in task.inputs if _visible(item)}
    bodies = tuple(
        _or_init(m, f"raise LookupError({_arguments(m.kind)})")
        if m.qualname in called
        else "return None"  # not probed: loading a `self` may call it (`__setstate__`)
        for m in task.hidden.target.members
    )
    return with_bodies(task, bodies).decode()


def _visible(item: CallInput) -> bool:
    return item.visible and item.provenance == "traced"


def _or_init(member: Target, body: str, init: str | None = None) -> str:
    """`body`, but the plumbing that builds an instance: `__new__` makes a bare one, `__init__`
    does nothing but `init` (the runner builds each call's `self` through them)."""
    if member.name == "__new__":
        receiver = member.signature.split("(", 1)[1].split(",")[0].split(")")[0].strip()
        return f"return super().__new__({receiver})"
    return (init or "return None") if member.name == "__init__" else body


def _key(outcome: Mapping[str, Any]) -> str | None:
    """The key a probed call raised with."""
    exc = outcome.get("exc")
    if outcome.get("status") != "raised" or not isinstance(exc, Mapping):
        return None
    return str(exc.get("msg")) if exc.get("type") == "builtins.LookupError" else None


def _answer(outcome: Mapping[str, Any], target: Target) -> str | None:
    """The recorded outcome as a table entry's source: ("r", <value>), ("x", <builtin>), or
    ("o", <its base or None>, <its fields>) for an instance of the task's own class (what the
    visible calls of boltons' classes return: `FrozenDict.fromkeys`, `FilePerms.from_int`)."""
    if outcome.get("status") == "returned":
        value = outcome.get("value")
        text = literal(value)
        if text is not None:
            return f"('r', {text})"
        return _instance(value, target) if isinstance(value, Mapping) else None
    exc = outcome.get("exc")
    kind = exc.get("type") if isinstance(exc, Mapping) else None
    if isinstance(kind, str) and kind.startswith("builtins."):
        return f"('x', {kind.removeprefix('builtins.')!r})"
    return None


def _instance(value: Mapping[str, Any], target: Target) -> str | None:
    """An instance of the task's class (`obj`, or `sub` of a dict or a list) whose base and
    fields are literals, as ("o", <base or None>, <fields>)."""
    if value.get("t") not in ("obj", "sub") or value.get("type") != target.symbol:
        return None
    base = literal(value["base"]) if value.get("t") == "sub" else "None"
    fields = {name: literal(field) for name, field in dict(value.get("fields") or {}).items()}
    if base is None or (base != "None" and base[0] not in "[{") or None in fields.values():
        return None
    return f"('o', {base}, {{{', '.join(f'{k!r}: {v}' for k, v in fields.items())}}})"


def _returned(target: Target) -> str:
    """A member body's expression that gives back a table entry `_a` (see `_answer`; ("e",
    <an exception>) is raised as it is)."""
    built = (
        f"(object.__new__({target.qualname}) if _a[1] is None "
        f"else type(_a[1]).__new__({target.qualname}))"
    )
    return (
        "_a[1] if _a[0] == 'r' else "
        "(_ for _ in ()).throw(_a[1]) if _a[0] == 'e' else "
        "(_ for _ in ()).throw(getattr(__import__('builtins'), _a[1])()) if _a[0] == 'x' else "
        f"[_o := {built}, _a[1] is None or type(_a[1]).__init__(_o, _a[1]), "
        "[object.__setattr__(_o, _f, _v) for _f, _v in _a[2].items()], _o][-1]"
    )


def _nothing(member: Target) -> str | None:
    return None


def table_class(
    task: LoadedTask,
    jail: Jail,
    first: Callable[[Target], str | None] = _nothing,
    tail: str = "",
    otherwise: str = "('r', None)",
) -> str:
    """The table class's text: each member answers a visible call from its table (`_answer`),
    `otherwise` (a table entry: None) on any other.  `first(member)`, when it gives one, is an
    expression of the member's parameters' values `_p` tried before the table (a table entry,
    or None: not answered), and `tail` is appended to the file (what `first` calls)."""
    probed = run_candidate(task, _probe(task), jail)
    assert not isinstance(probed, Refusal), probed.reason
    outcomes = probed.run.parsed.outcomes
    tables: dict[str, dict[str, str]] = {}
    for item in task.inputs:
        if not _visible(item):
            continue
        key = _key(outcomes.get(item.index, {}))
        answer = _answer(task.expected[item.index], task.hidden.target)
        if key is not None and answer is not None:
            tables.setdefault(item.member or "", {}).setdefault(key, answer)
    bodies = []
    for member in task.hidden.target.members:
        table = ", ".join(f"{k!r}: {v}" for k, v in tables.get(member.qualname, {}).items())
        skip = 0 if member.kind == "staticmethod" else 1
        lookup = f"{{{table}}}.get(repr(_p[{skip}:]), {otherwise})"
        before = first(member)
        found = lookup if before is None else f"({before}) or {lookup}"
        body = f"_p = list(locals().values()); _a = {found}; return {_returned(task.hidden.target)}"
        noted = f"_p = list(locals().values()); {before}; return None" if before else None
        bodies.append(_or_init(member, body, noted))
    return with_bodies(task, tuple(bodies)).decode() + tail


def _answered(task: LoadedTask, text: str, jail: Jail) -> int:
    """How many visible calls the table class answers as the reference does (its run)."""
    found = run_candidate(task, text, jail)
    assert not isinstance(found, Refusal), found.reason
    got, settings = found.run.parsed.outcomes, task.hidden.grading
    return sum(
        compare_outcome(task.expected[item.index], got.get(item.index), settings) is None
        for item in task.inputs
        if _visible(item)
    )


def test_a_table_of_the_visible_calls_earns_nothing_on_class_tasks(boltons: Minted) -> None:
    batch = Batch.open(boltons.batch)
    ids = [i for i in batch.ids if batch.spec(i).task_kind is TaskKind.CLASS]
    assert ids
    rows = []
    for ident in ids:
        task = batch.load(ident)
        jail = Jail(context_for(task.repo, cache_root()), get_sandbox("local"))
        text = table_class(task, jail)
        answered = _answered(task, text, jail)
        verdict = grade_text(task, text, jail, shrink=False)
        assert verdict.status == "graded", (ident, verdict.reason)
        baseline = task.hidden.baseline
        assert baseline is not None
        before = next(p.raw_reward for p in baseline.programs if p.program == EACH_METHOD)
        raw = verdict.raw_reward or 0.0
        rows.append((ident, answered, verdict.reward or 0.0, raw, normalise(raw, before)))
    print(json.dumps({"class_tasks": len(rows), "rows": rows}))
    # the table answers visible calls (boltons': each returns an instance of its class)
    assert sum(answered for _, answered, *_ in rows) > 0, rows
    # the defence: under the limit on every class task
    assert max(reward for _, _, reward, _, _ in rows) < MAX_DEGENERATE_REWARD, rows
    # the positive control: without the normalisation the same classes earn above it somewhere
    # (~0.26 raw on boltons' ManyToMany: most of it the None bodies' share of the call
    # sequences, which its family earns too; keyed by arguments alone, a table cannot tell one
    # state from another)
    assert max(raw for _, _, _, raw, _ in rows) > MAX_DEGENERATE_REWARD, rows
