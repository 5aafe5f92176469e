"""Inputs that tell a task from its degenerate programs, searched before a weak task is dropped.

When a degenerate program (a table of the visible calls included) reaches the floor of its kind
(`replicate.gen.baseline.too_weak`), the hidden inputs do not reach far enough beyond what the
tests show.  More inputs are generated from the traced calls exactly as for surviving mutants
(`replicate.gen.survivors.search`: widened, edge and recombined values, run twice, only
deterministic, comparable, quick, compact outcomes kept), under another salt, with renamed
calls beside them (`replicate.inputs.renaming`: a name the tests look up, renamed in the
arguments and in the object that holds it, so the lookup succeeds on a name no visible call
shows); the degenerate programs run on them; a few inputs that the programs at the floor get
wrong (about as many for each, `balanced`, `MAX_ADDED` in all) are re-checked against the
reference under hash seed 0 and returned to join the hidden inputs.  The caller computes the
baseline again and keeps the task only if it is under the floor.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replicate.batch import LoadedTask
from replicate.core import Baseline, CallInput
from replicate.gen.baseline import behind, program_outcomes, reaching_floor
from replicate.gen.survivors import Search, confirmed, reference_run, search
from replicate.grading import compare_outcome
from replicate.inputs import Budget
from replicate.jail import Jail

Outcome = Mapping[str, Any]
SALT = "baseline"
SEARCH = Budget(widened=300, edge=60)
MAX_ADDED = 60  # a baseline a little above the floor needs a few dozen to come under it
RENAMES = 60  # renamed calls searched beside the widened ones (`replicate.inputs.renaming`)


@dataclass(frozen=True)
class Separating:
    """Searched inputs the degenerate programs at the floor get wrong, with the reference's
    outcomes (by the inputs' searched indices) and call times."""

    added: tuple[CallInput, ...]
    expected: Mapping[int, Outcome]
    times: tuple[float, ...]


NONE = Separating((), {}, ())


def separating(task: LoadedTask, found: Baseline, jail: Jail) -> Separating | str:
    """Inputs that pull the programs reaching the floor down; a str on infrastructure trouble."""
    weak = [behind(p.program) for p in reaching_floor(found)]
    if not weak:
        return NONE
    reference = reference_run(task, jail)
    if isinstance(reference, str):
        return f"baseline search: reference run failed: {reference}"
    if not reference.seeds:
        return NONE
    spelled = task.language().literals(task.repo.tree)
    searched = search(task, jail, reference, SEARCH, SALT, renames=RENAMES, spelled=spelled)
    if not searched.inputs:
        return NONE
    probe = _probe(task, searched)
    outcomes = program_outcomes(probe, jail, common=list(task.expected.values()))
    if isinstance(outcomes, str):
        return f"baseline search: {outcomes}"
    differing = [_wrong(probe, outcomes[name]) for name in dict.fromkeys(weak) if name in outcomes]
    order = [i.index for i in searched.inputs]
    chosen = balanced(differing, order, limit=MAX_ADDED)
    added = confirmed(task, jail, searched, chosen)
    return Separating(
        tuple(added),
        {i.index: searched.expected[i.index] for i in added},
        tuple(searched.times[i.index] for i in added),
    )


def balanced(differing: Sequence[frozenset[int]], order: Sequence[int], limit: int) -> list[int]:
    """Input indices the programs get wrong (`differing`: per program, the inputs it gets
    wrong), `limit` at most: each time for the program with the fewest wrong among those chosen
    so far, the input it gets wrong that most others get wrong too (ties by `order`, the
    generation order).  Every program ends with about as many wrong: the greedy choice of the
    input most programs get wrong spends the whole limit on those when five programs fail one
    kind of input and a sixth only another (`return False` beside five that raise)."""
    rank = {index: n for n, index in enumerate(order)}
    live = [wrong for wrong in differing if wrong]
    counts = [0] * len(live)
    chosen: list[int] = []
    taken: set[int] = set()
    while len(chosen) < limit:
        left = [n for n, wrong in enumerate(live) if wrong - taken]
        if not left:
            break
        target = min(left, key=lambda n: (counts[n], n))
        best = min(
            live[target] - taken,
            key=lambda i: (-sum(i in wrong for wrong in live), rank.get(i, len(rank))),
        )
        chosen.append(best)
        taken.add(best)
        counts = [c + (best in wrong) for c, wrong in zip(counts, live, strict=True)]
    return chosen


def _probe(task: LoadedTask, searched: Search) -> LoadedTask:
    """The task with the searched inputs as its only inputs (to run the programs on them)."""
    return dataclasses.replace(task, inputs=searched.inputs, expected=dict(searched.expected))


def _wrong(probe: LoadedTask, got: Mapping[int, Outcome]) -> frozenset[int]:
    """The inputs on which a program's outcome is not the reference's."""
    settings = probe.hidden.grading
    return frozenset(
        i.index
        for i in probe.inputs
        if compare_outcome(probe.expected[i.index], got.get(i.index), settings) is not None
    )
