"""Red team, class tasks: a class that answers the visible tests' calls from a lookup table and
returns None elsewhere earns < MAX_DEGENERATE_REWARD normalised on every class task of the
session's boltons batch (`tests/e2e/conftest.py`), because gen graded the degenerate classes
behind such a table (`replicate.gen.class_families`) and the baseline holds them.

The attacker is given more than the workspace shows: the exact arguments of every visible call
(a probe class, graded once, returns each call's `repr(arguments)` as its result) and the
reference's answers to them.  Each member of the table class computes the same key from its own
arguments and returns the recorded value (or raises the recorded builtin exception), None on any
other call.  The positive control: with the normalisation off (its raw reward), the same class
earns well above the limit on some class task; so does it against the baseline gen recorded
before the families (the methods' own degenerate programs only).
"""

from __future__ import annotations

import json

from replicate.batch.store import Batch, LoadedTask
from replicate.cache import cache_root
from replicate.core import TaskKind
from replicate.gen.class_families import with_bodies
from replicate.gen.classes import EACH_METHOD
from replicate.gen.families import literal
from replicate.grading import Refusal, grade_text, normalise, run_candidate
from replicate.grading.reward import MAX_DEGENERATE_REWARD
from replicate.jail import Jail
from replicate.jail.context import context_for
from replicate.sandbox import get_sandbox
from replicate.values import plain
from tests.e2e.conftest import Minted

CONTROL = 0.2  # the least raw reward the attack shows on some task with the defence off


def _arguments(member_kind: str) -> str:
    """An expression of a member's own arguments (its receiver left out), from its body's start."""
    skip = 0 if member_kind == "staticmethod" else 1
    return f"repr(list(locals().values())[{skip}:])"


def _probe(task: LoadedTask) -> str:
    members = task.hidden.target.members
    return with_bodies(task, tuple(f"return {_arguments(m.kind)}" for m in members)).decode()


def _answer(outcome: dict[str, object]) -> str | None:
    """The recorded outcome as a table entry's source: ("r", <value>) or ("x", <builtin>)."""
    if outcome.get("status") == "returned":
        text = literal(outcome.get("value"))
        return None if text is None else f"('r', {text})"
    exc = outcome.get("exc")
    kind = exc.get("type") if isinstance(exc, dict) else None
    if isinstance(kind, str) and kind.startswith("builtins."):
        return f"('x', {kind.removeprefix('builtins.')!r})"
    return None


def _table_class(task: LoadedTask, jail: Jail) -> tuple[str, int]:
    """The table class's text, and how many visible calls its table answers."""
    probed = run_candidate(task, _probe(task), jail)
    assert not isinstance(probed, Refusal), probed.reason
    outcomes = probed.run.parsed.outcomes
    tables: dict[str, dict[str, str]] = {}
    for item in task.inputs:
        got = outcomes.get(item.index, {})
        if not (item.visible and item.provenance == "traced" and got.get("status") == "returned"):
            continue
        key, answer = plain.decode(got["value"]), _answer(dict(task.expected[item.index]))
        if isinstance(key, str) and answer is not None:
            tables.setdefault(item.member or "", {}).setdefault(key, answer)
    bodies = []
    for member in task.hidden.target.members:
        table = "{" + ", ".join(f"{k!r}: {v}" for k, v in tables.get(member.qualname, {}).items())
        bodies.append(
            f"_k = {_arguments(member.kind)}; _a = {table}}}.get(_k, ('r', None)); "
            "return _a[1] if _a[0] == 'r' else "
            "(_ for _ in ()).throw(getattr(__import__('builtins'), _a[1])())"
        )
    answered = sum(len(t) for t in tables.values())
    return with_bodies(task, tuple(bodies)).decode(), answered


def test_a_table_of_the_visible_calls_earns_nothing_on_class_tasks(boltons: Minted) -> None:
    batch = Batch.open(boltons.batch)
    ids = [i for i in batch.ids if batch.spec(i).task_kind is TaskKind.CLASS]
    assert ids
    rows = []
    for ident in ids:
        task = batch.load(ident)
        jail = Jail(context_for(task.repo, cache_root()), get_sandbox("local"))
        text, answered = _table_class(task, jail)
        verdict = grade_text(task, text, jail, shrink=False)
        assert verdict.status == "graded", (ident, verdict.reason)
        baseline = task.hidden.baseline
        assert baseline is not None
        before = next(p.raw_reward for p in baseline.programs if p.program == EACH_METHOD)
        raw = verdict.raw_reward or 0.0
        rows.append((ident, answered, verdict.reward or 0.0, raw, normalise(raw, before)))
    print(json.dumps({"class_tasks": len(rows), "rows": rows}))
    assert sum(answered for _, answered, *_ in rows) > 0  # the table answers visible calls
    # the defence: under the limit on every class task
    assert max(reward for _, _, reward, _, _ in rows) < MAX_DEGENERATE_REWARD, rows
    # the positive control: without the normalisation, and against the baseline gen recorded
    # before the families, the same classes earn well above the limit somewhere
    assert max(raw for _, _, _, raw, _ in rows) >= CONTROL, rows
    assert max(earned for *_, earned in rows) > MAX_DEGENERATE_REWARD, rows
