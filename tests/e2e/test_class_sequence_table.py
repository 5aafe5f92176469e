"""Red team, class tasks: a class that replays the visible tests' call sequences from a table,
answers the visible calls from another (`test_class_table.py`'s) and returns None elsewhere
earns < MAX_DEGENERATE_REWARD normalised on every class task of the session's boltons batch
(`tests/e2e/conftest.py`).

The attack is what an agent can build from the workspace: run the visible tests, note each
instance's calls in order and what each returned, and answer from that table.  Every member of
the table class notes its call (its bound arguments) in the instance's history; while the
history is a prefix of a visible recorded sequence (same names, equal arguments), the member
gives that step's recorded outcome (its value, its exception, or the instance); otherwise it
answers from the table of the visible calls, and returns None on any other call.  So it earns
every step of the visible sequences and of any other sequence that begins like one, and the
visible calls, and nothing of what only a working class gives.

The defence: gen grades a table of the visible call sequences in front of each degenerate
class (`replicate.gen.class_families`), and the baseline holds it.  The positive control: against
the baseline without those tables the same class beats every other degenerate program on some
class task (it earns reward there, ~0.04 on boltons' LRI; under the limit even so: the widened
sequences, half of the sequences' score, are nobody's visible calls).
"""

from __future__ import annotations

import json
from pathlib import Path

from replicate.batch.store import Batch, LoadedTask
from replicate.cache import cache_root
from replicate.core import SequenceStratum, StepOutcome, Target, TaskKind
from replicate.gen.class_families import SEQUENCE_TABLE
from replicate.grading import grade_text, normalise
from replicate.grading.reward import MAX_DEGENERATE_REWARD
from replicate.jail import Jail
from replicate.jail.context import context_for
from replicate.sandbox import get_sandbox
from tests.e2e.conftest import REPO_ROOT, Minted
from tests.e2e.test_class_table import table_class

# Appended to the target file: the table (each visible recorded sequence's steps as
# (name, pickled (args, kwargs), outcome, pickled result)) and its lookup.
_LOOKUP = """

_SEQ_TABLE = {table!r}
_SEQ_HISTORY = {{}}


def _seq_bound(instance, name, blob):
    import base64, inspect, pickle
    args, kwargs = pickle.loads(base64.b64decode(blob))
    found = inspect.signature(getattr(type(instance), name)).bind(instance, *args, **kwargs)
    found.apply_defaults()
    return list(found.arguments.values())[1:]


def _seq_answer(instance, name, arguments):
    import base64, pickle
    if name == "__init__":  # kept alive with its history: no later instance takes its id
        _SEQ_HISTORY[id(instance)] = (instance, [])
    if id(instance) not in _SEQ_HISTORY:
        return None  # not built by a class call (a member's input loads its `self`)
    history = _SEQ_HISTORY[id(instance)][1]
    history.append((name, arguments))
    at = len(history) - 1
    for steps in _SEQ_TABLE:
        if len(steps) <= at or not all(_seq_same(instance, h, s) for h, s in zip(history, steps)):
            continue
        _, _, outcome, result = steps[at]
        if outcome == "self":
            return ("r", instance)
        value = pickle.loads(base64.b64decode(result)) if result else None
        return ("e", value) if outcome == "raised" else ("r", value)
    return None


def _seq_same(instance, noted, step):
    try:
        return noted[0] == step[0] and noted[1] == _seq_bound(instance, step[0], step[1])
    except Exception:
        return False
"""


def _table(task: LoadedTask) -> list[list[tuple[str, str, str, str]]]:
    """The visible recorded sequences' steps, as the attacker noted them."""
    return [
        [(s.name, s.args_b64, s.outcome.value, s.result_b64) for s in hidden.sequence.steps]
        for hidden in task.sequences
        if hidden.stratum is SequenceStratum.RECORDED
        and hidden.sequence.visible
        and all(s.outcome is not StepOutcome.UNRECORDED for s in hidden.sequence.steps)
    ]


def _noted(member: Target) -> str | None:
    """The expression that notes a member's call in its instance's history and answers it from
    the sequences' table (None: a member with no instance to note a history on)."""
    if member.kind in ("staticmethod", "classmethod", "property"):
        return None
    return f"_seq_answer(_p[0], {member.name!r}, _p[1:])"


# what the table class does on a call neither table answers: the best of two families
OTHERWISE = ("('r', None)", "('x', 'ValueError')")
CONTROL_MIN = 0.02  # the attack's reward without the sequence tables, somewhere


def _rows(batch_dir: Path) -> list[tuple[str, int, float, float, float]]:
    """Per class task with visible recorded sequences: how many, and the attack's reward, raw
    reward and normalised reward against the baseline without the sequence tables (the best
    of its fallbacks by raw reward)."""
    batch = Batch.open(batch_dir)
    rows = []
    for ident in [i for i in batch.ids if batch.spec(i).task_kind is TaskKind.CLASS]:
        task = batch.load(ident)
        if not _table(task):
            continue
        jail = Jail(context_for(task.repo, cache_root()), get_sandbox("local"))
        tail = _LOOKUP.format(table=_table(task))
        verdicts = []
        for otherwise in OTHERWISE:
            text = table_class(task, jail, _noted, tail, otherwise)
            verdict = grade_text(task, text, jail, shrink=False)
            assert verdict.status == "graded", (ident, verdict.reason)
            verdicts.append(verdict)
        best = max(verdicts, key=lambda v: v.raw_reward or 0.0)
        baseline = task.hidden.baseline
        assert baseline is not None
        programs = baseline.programs
        without = max(p.raw_reward for p in programs if SEQUENCE_TABLE not in p.program)
        raw = best.raw_reward or 0.0
        rows.append((ident, len(_table(task)), best.reward or 0.0, raw, normalise(raw, without)))
    return rows


def test_a_table_of_the_visible_call_sequences_earns_nothing_on_class_tasks(
    boltons: Minted,
) -> None:
    rows = _rows(REPO_ROOT) + _rows(boltons.batch)  # the bundled batch's, and boltons'
    print(json.dumps({"class_tasks_with_visible_sequences": len(rows), "rows": rows}))
    assert len(rows) >= 5, rows
    # the defence: under the limit on every class task
    assert max(reward for *_, reward, _, _ in rows) < MAX_DEGENERATE_REWARD, rows
    # the positive control: against the baseline without the sequence tables it beats every
    # other degenerate program somewhere (boltons' LRI: ~0.04 normalised; on samplelib's
    # classes the members' own degenerate programs already earn more than the table)
    assert any(control > CONTROL_MIN > reward for _, _, reward, _, control in rows), rows
