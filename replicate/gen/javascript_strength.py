"""A JavaScript task's strength at gen time: mutants of its target (`languages.javascript_mutants`,
the JS mutation-testing operators) each run as a candidate file on the task's hidden inputs in
one jailed Node process (`grading.javascript.run_script`, a warm one started while the mutant
before runs), the kill rate recorded in the same
`core.Strength` as a Python task's (`gen.strength`). A mutant is killed when any outcome differs
from the stored one (`compare_node`: a wrong value, throw, argument after the call, a timeout,
or a module that no longer loads). Up to `gen.strength.MUTANTS` mutants a task; a body giving
fewer than `FEW` standard ones gets the extra (call and return) operators, as Python's does;
none at all: kill rate 1.0 over 0 mutants, which `gen.strength.rejected` never drops.

Not here yet (Python's has them): the survivor search (no inputs are added for survivors, so
`killed_before` is `killed` and `added_inputs` 0) and equivalent-mutant detection.
"""

from __future__ import annotations

from replicate.batch import LoadedTask
from replicate.core import Strength
from replicate.gen.strength import MIN_MUTANT_TOTAL_S, MUTANTS
from replicate.grading import javascript as graded
from replicate.jail import Sandbox, WarmPool
from replicate.languages import javascript_mutants


def task_mutants(
    task: LoadedTask, limit: int = MUTANTS, seed: int = 0
) -> list[javascript_mutants.Mutant]:
    """The task's mutants: the standard operators, the extra ones joining below `FEW`."""
    source, target = task.original_source(), task.hidden.target
    found = javascript_mutants.mutants(source, target, limit=limit, seed=seed)
    if len(found) < javascript_mutants.FEW:
        found = javascript_mutants.mutants(source, target, limit=limit, seed=seed, extra=True)
    return found


def killed(
    task: LoadedTask,
    sandbox: Sandbox,
    mutant: javascript_mutants.Mutant,
    timeout_s: float,
    pool: WarmPool | None = None,
) -> bool:
    """Whether the task's hidden inputs tell `mutant` from the original."""
    candidate = javascript_mutants.mutant_file(task.original_source(), mutant)
    outcomes = graded.run_script(task, sandbox, candidate, timeout_s, pool)
    return graded.score_script(task, outcomes).reward < 1.0


def measure(
    task: LoadedTask, sandbox: Sandbox, threshold: float, reference_s: float, warm: bool = True
) -> Strength:
    """The kill rate of the task's mutants on its hidden inputs; each mutant's run may take
    `MIN_MUTANT_TOTAL_S` or 10x the reference's (`reference_s`), whichever is longer.  With
    `warm`, each mutant's jail is started while the one before runs (`warm_series`)."""
    timeout_s = max(MIN_MUTANT_TOTAL_S, 10 * reference_s)
    found = task_mutants(task)
    with graded.warm_series(task, sandbox, len(found) if warm else 0, timeout_s) as pool:
        dead = sum(1 for m in found if killed(task, sandbox, m, timeout_s, pool))
    rate = dead / len(found) if found else 1.0
    return Strength(
        mutants=len(found),
        killed=dead,
        kill_rate=round(rate, 6),
        killed_before=dead,
        likely_equivalent=0,
        added_inputs=0,
        searched_inputs=0,
        threshold=threshold,
    )
