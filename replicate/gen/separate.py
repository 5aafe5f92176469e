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

from replicate.batch import LoadedTask, StoredOutcome
from replicate.core import Baseline, CallInput, DropReason
from replicate.gen.baseline import behind, program_outcomes, reaching_floor
from replicate.gen.survivors import Search, confirmed, reference_run, search
from replicate.grading import compare_outcome
from replicate.inputs import Budget
from replicate.jail import Jail, wire

Outcome = wire.Outcome
SALT = "baseline"
SEARCH = Budget(widened=300, edge=60)
MAX_ADDED = 60  # a baseline a little above the floor needs a few dozen to come under it
RENAMES = 60  # renamed calls searched beside the widened ones (`replicate.inputs.renaming`)


@dataclass(frozen=True)
class Separating:
    """Searched inputs the degenerate programs at the floor get wrong, with the reference's
    outcomes (by the inputs' searched indices) and call times."""

    added: tuple[CallInput, ...]
    expected: Mapping[int, StoredOutcome]
    times: tuple[float, ...]


NONE = Separating((), {}, ())


def separating(task: LoadedTask, found: Baseline, jail: Jail, round_: int = 0) -> Separating | str:
    """Inputs that pull the programs reaching the floor down; a str on infrastructure trouble.
    `round_`: the search's round for this task (each searches under a salt of its own)."""
    weak = [behind(p.program) for p in reaching_floor(found)]
    if not weak:
        return NONE
    reference = reference_run(task, jail)
    if isinstance(reference, str):
        return f"{DropReason.SEARCH_FAILED}: reference run failed: {reference}"
    if not reference.seeds:
        return NONE
    spelled = task.language().literals(task.repo.tree)
    salt = f"{SALT}-{round_}" if round_ else SALT
    searched = search(task, jail, reference, SEARCH, salt, renames=RENAMES, spelled=spelled)
    if not searched.inputs:
        return NONE
    probe = _probe(task, searched)
    outcomes = program_outcomes(probe, jail, common=list(task.expected.values()))
    if isinstance(outcomes, str):
        return f"{DropReason.SEARCH_FAILED}: {outcomes}"
    names = [name for name in dict.fromkeys(weak) if name in outcomes]
    at_floor = len(names)
    names += [name for name in outcomes if name not in names]
    wrong = [_wrong(probe, outcomes[name]) for name in names]
    levels = [level(found, name) * len(task.inputs) for name in names]
    order = [i.index for i in searched.inputs]
    chosen = balanced(wrong[:at_floor], order, MAX_ADDED, wrong[at_floor:], levels)
    added = confirmed(task, jail, searched, chosen)
    return Separating(
        tuple(added),
        {i.index: searched.expected[i.index] for i in added},
        tuple(searched.times[i.index] for i in added),
    )


def balanced(
    differing: Sequence[frozenset[int]],
    order: Sequence[int],
    limit: int,
    others: Sequence[frozenset[int]] = (),
    levels: Sequence[float] = (),
) -> list[int]:
    """Input indices the programs at the floor get wrong (`differing`: per program, the inputs
    it gets wrong), `limit` at most, chosen one at a time: the input after which the program
    with the most right answers has the fewest (`levels`: each program's right answers before,
    0 by default; `others`: the wrong inputs of the programs under the floor, which an input may
    lift: `return low` of a clamp, when the inputs that pull `return high` down are values below
    the range), then the one most programs get wrong, then by `order`, the generation order.
    Every program ends with about as many wrong: the greedy choice of the input most programs
    get wrong spends the whole limit on those when five programs fail one kind of input and a
    sixth only another (`return False` beside five that raise)."""
    rank = {index: n for n, index in enumerate(order)}
    left: set[int] = set().union(*differing) if differing else set()
    padded = [*levels, *[0.0] * (len(differing) + len(others) - len(levels))]
    # a program that every choice moves alike (right on all of them, or wrong) cannot be helped
    kept = [
        (wrong, level)
        for wrong, level in zip([*differing, *others], padded, strict=True)
        if 0 < len(wrong & left) < len(left)
    ]
    every = [wrong for wrong, _ in kept]
    right = [level for _, level in kept]
    chosen: list[int] = []
    while left and len(chosen) < limit:
        best = min(
            left,
            key=lambda i: (
                max(
                    (r + (i not in wrong) for r, wrong in zip(right, every, strict=True)), default=0
                ),
                -sum(i in wrong for wrong in every),
                rank.get(i, len(rank)),
            ),
        )
        chosen.append(best)
        left.discard(best)
        right = [r + (best not in wrong) for r, wrong in zip(right, every, strict=True)]
    return chosen


def level(found: Baseline, name: str) -> float:
    """The best raw reward of a program or the table of the visible calls in front of it."""
    return max((p.raw_reward for p in found.programs if behind(p.program) == name), default=0.0)


def _probe(task: LoadedTask, searched: Search) -> LoadedTask:
    """The task with the searched inputs as its only inputs (to run the programs on them)."""
    return dataclasses.replace(task, inputs=searched.inputs, expected=dict(searched.expected))


def _wrong(probe: LoadedTask, got: Mapping[int, StoredOutcome]) -> frozenset[int]:
    """The inputs on which a program's outcome is not the reference's."""
    settings = probe.hidden.grading
    return frozenset(
        i.index
        for i in probe.inputs
        if compare_outcome(probe.expected[i.index], got.get(i.index), settings) is not None
    )
