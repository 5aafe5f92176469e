"""Inputs that kill the mutants a task's hidden inputs let through (the strength check's step 2).

More inputs are generated from the traced calls (`replicate.inputs.widening.widen` with a bigger
budget and another salt), screened and run twice exactly as golden outputs are
(`replicate.gen.golden`: hash seeds 1 and 2, the clock moved ahead; only deterministic,
comparable, quick, compact outcomes are kept). The surviving mutants run on them; a few inputs
that kill the most survivors (greedily, `per_survivor` each, `limit` in all) are re-checked against
the reference under hash seed 0, as a candidate is graded, and join the hidden inputs.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from replicate.batch import LoadedTask, StoredOutcome
from replicate.core import CallInput
from replicate.gen.golden import (
    CLOCK_SHIFT_DAYS,
    SLOW_S,
    Golden,
    Sizes,
    keep,
    run_resuming,
    screen,
    seed_of,
)
from replicate.gen.settings import WIDEN_SETTINGS, leashed
from replicate.grading import compare_outcome
from replicate.inputs import Budget, Seed, renamings, seeds_among, widen
from replicate.jail import Jail, wire

Outcome = wire.Outcome
SALT = "strength"


@dataclass(frozen=True)
class Search:
    """Deterministic generated inputs and the reference's outcomes on them."""

    inputs: tuple[CallInput, ...]
    expected: Mapping[int, StoredOutcome]
    times: Mapping[int, float]
    tried: int


NOTHING = Search((), {}, {}, 0)


@dataclass(frozen=True)
class Reference:
    """The reference's run on the hidden inputs: seeds to generate from, and its timing."""

    seeds: tuple[Seed, ...]
    wall_s: float  # the whole jailed run
    slowest_s: float  # the slowest single call


def reference_run(task: LoadedTask, jail: Jail) -> Reference | str:
    """Run the reference on the hidden inputs, reporting the arguments as the runner saw them
    (the traced ones become seeds); a str on infrastructure trouble."""
    target = task.hidden.target
    started = time.monotonic()
    run = jail.run(target, task.inputs, task.hidden.grading, hash_seed=1, encode_inputs=True)
    elapsed = time.monotonic() - started
    problem = run.infra_problem() or run.parsed.import_error
    if problem:
        return problem
    outcomes = run.parsed.outcomes
    found = [seed_of(i, outcomes[i.index]) for i in seeds_among(task.inputs) if i.index in outcomes]
    seeds = [seed for seed in found if seed is not None]
    slowest = max((float(o.get("t", 0.0)) for o in outcomes.values()), default=0.0)
    return Reference(tuple(seeds), elapsed, slowest)


def search(
    task: LoadedTask,
    jail: Jail,
    reference: Reference,
    budget: Budget,
    salt: str = SALT,
    first_index: int | None = None,
    renames: int = 0,
    spelled: frozenset[str] = frozenset(),
) -> Search:
    """Generate inputs with a salted seed and keep those golden outputs could be made of; with
    `renames`, as many renamed calls too (`replicate.inputs.renaming`; never of a string the
    library spells, `spelled`), kept only where the reference still returns."""
    target = task.hidden.target
    start = first_index if first_index is not None else _next_index(task)
    made = widen(target, reference.seeds, start, budget, salt=salt).inputs
    renamed = renamings(target, reference.seeds, start + len(made), renames, salt, spelled)
    made = (*made, *renamed)
    known = {i.pickle_b64 for i in task.inputs}
    made = tuple(i for i in made if i.pickle_b64 not in known)
    if not made:
        return NOTHING
    slow_s = max(SLOW_S, 3 * reference.slowest_s)
    first, _, infra = run_resuming(jail, target, made, 1, settings=leashed(slow_s))
    sizes = Sizes.in_batch(jail)
    fine, _ = screen(made, first, slow_s, sizes)
    if infra or not fine:
        return Search((), {}, {}, len(made))
    second, _, infra = run_resuming(
        jail, target, fine, 2, CLOCK_SHIFT_DAYS, settings=WIDEN_SETTINGS
    )
    if infra:
        return Search((), {}, {}, len(made))
    kept, expected, times = keep(
        target, fine, (first, second), Counter(), Counter(), slow_s, sizes=sizes
    )
    broken = {i.index for i in renamed} - {i for i, o in expected.items() if _returned(o)}
    pairs = [(item, t) for item, t in zip(kept, times, strict=True) if item.index not in broken]
    expected = {i: o for i, o in expected.items() if i not in broken}
    return Search(
        tuple(i for i, _ in pairs), expected, dict((i.index, t) for i, t in pairs), len(made)
    )


def _returned(outcome: StoredOutcome) -> bool:
    return outcome.get("status") == "returned"


def _next_index(task: LoadedTask) -> int:
    return max((i.index for i in task.inputs), default=-1) + 1


def pick_killers(
    differing: Sequence[frozenset[int]], order: Sequence[int], per_survivor: int, limit: int
) -> list[int]:
    """Input indices that kill the survivors (`differing`: per survivor, the inputs it gets
    wrong): greedily the input killing most survivors not yet killed `per_survivor` times, ties
    broken by `order` (the generation order)."""
    need = {n: per_survivor for n, wrong in enumerate(differing) if wrong}
    rank = {index: n for n, index in enumerate(order)}
    chosen: list[int] = []
    while need and len(chosen) < limit:
        gains: dict[int, int] = {}
        for n in need:
            for index in differing[n] - set(chosen):
                gains[index] = gains.get(index, 0) + 1
        if not gains:
            break
        best = min(gains, key=lambda i: (-gains[i], rank.get(i, len(rank))))
        chosen.append(best)
        for n in [n for n in need if best in differing[n]]:
            need[n] -= 1
            if need[n] == 0:
                del need[n]
    return chosen


def confirmed(
    task: LoadedTask,
    jail: Jail,
    searched: Search,
    chosen: Sequence[int],
) -> list[CallInput]:
    """The chosen inputs on which the reference also matches itself under hash seed 0."""
    picked = [i for i in searched.inputs if i.index in set(chosen)]
    if not picked:
        return []
    target = task.hidden.target
    run = jail.run(target, picked, WIDEN_SETTINGS, hash_seed=0)
    got = run.parsed.outcomes
    return [
        i
        for i in picked
        if compare_outcome(searched.expected[i.index], got.get(i.index), WIDEN_SETTINGS) is None
    ]


def joined(
    g: Golden,
    added: Sequence[CallInput],
    expected: Mapping[int, StoredOutcome],
    times: Sequence[float],
) -> Golden:
    """The golden outputs with searched inputs added (`expected` by their searched index),
    numbered after every input of `g` (the examples held out of the hidden inputs included)."""
    if not added:
        return g
    start = max((i.index for i in g.inputs), default=-1) + 1
    renumbered = [i.model_copy(update={"index": start + n}) for n, i in enumerate(added)]
    outcomes = {start + n: expected[i.index] for n, i in enumerate(added)}
    return dataclasses.replace(
        g,
        inputs=(*g.inputs, *renumbered),
        expected={**g.expected, **outcomes},
        max_call_s=max(g.max_call_s, *times),
        total_call_s=g.total_call_s + sum(times),
    )
