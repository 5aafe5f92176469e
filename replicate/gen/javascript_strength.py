"""A JavaScript task's strength at gen time, as a Python task's (`gen.strength`):

1. Mutants of its target (`languages.javascript_mutants`, the JS mutation-testing operators)
   each run as a candidate file on the task's hidden inputs in one jailed Node process
   (`grading.javascript.run_script`, a warm one started while the mutant before runs). A mutant
   is killed when any outcome differs from the stored one (`compare_node`: a wrong value, throw,
   argument after the call, a timeout, or a module that no longer loads). Up to
   `gen.strength.MUTANTS` mutants a task; a body giving fewer than `FEW` standard ones gets the
   extra (call and return) operators, as Python's does; none at all: kill rate 1.0 over 0
   mutants, which `gen.strength.rejected` never drops.
2. Survivors are hunted: fast-check draws more calls from the task's traced ones (`SEARCH`: a
   bigger draw, another seed), kept where the original gives each one outcome under the
   determinism gate's runs (`gen.javascript_drawn`). Each survivor runs on them; a few that kill
   the most survivors (greedily, `gen.survivors.pick_killers`: at most `PER_SURVIVOR` per
   survivor, `MAX_ADDED` in all) join the hidden inputs. Survivors nothing kills are reported as
   likely equivalent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from replicate.batch import LoadedTask
from replicate.core import CallInput, Strength
from replicate.gen.javascript_drawn import hidden_input, next_index, searched_calls
from replicate.gen.strength import MAX_ADDED, MIN_MUTANT_TOTAL_S, MUTANTS, PER_SURVIVOR
from replicate.gen.survivors import pick_killers
from replicate.grading import javascript as graded
from replicate.jail import Sandbox, WarmPool, node, node_harvest, node_widening
from replicate.languages import javascript_mutants

SEARCH = node_widening.Widening(count=200, seed=1)  # the widening's is 40 calls, seed 0


@dataclass(frozen=True)
class Measured:
    """A task's strength and the searched inputs (with the original's outcomes) to add to it."""

    strength: Strength
    added: tuple[tuple[CallInput, node.NodeOutcome], ...] = ()


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
    task: LoadedTask,
    sandbox: Sandbox,
    threshold: float,
    reference_s: float,
    search: node_widening.Widening | None = SEARCH,
    warm: bool = True,
) -> Measured:
    """The kill rate of the task's mutants on its hidden inputs and, with `search`, on the
    searched inputs that kill survivors; each mutant's run may take `MIN_MUTANT_TOTAL_S` or 10x
    the reference's (`reference_s`), whichever is longer. With `warm`, each mutant's jail is
    started while the one before runs (`grading.javascript.warm_series`)."""
    timeout_s = max(MIN_MUTANT_TOTAL_S, 10 * reference_s)
    found = task_mutants(task)
    with graded.warm_series(task, sandbox, len(found) if warm else 0, timeout_s) as pool:
        alive = [m for m in found if not killed(task, sandbox, m, timeout_s, pool)]
    searched: tuple[node_harvest.Recorded, ...] = ()
    if alive and search is not None:
        searched = searched_calls(task, sandbox, search)
    differing = [_differing(task, sandbox, m, searched, timeout_s) for m in alive]
    chosen = pick_killers(differing, range(len(searched)), PER_SURVIVOR, MAX_ADDED)
    still = sum(1 for wrong in differing if not wrong & set(chosen))
    start = next_index(task)
    target = task.hidden.target
    added = tuple(
        (hidden_input(start + n, searched[i], target, generated=True), searched[i].outcome)
        for n, i in enumerate(chosen)
    )
    total = len(found)
    rate = (total - still) / total if total else 1.0
    strength = Strength(
        mutants=total,
        killed=total - still,
        kill_rate=round(rate, 6),
        killed_before=total - len(alive),
        likely_equivalent=sum(1 for wrong in differing if not wrong) if searched else 0,
        added_inputs=len(added),
        searched_inputs=len(searched),
        threshold=threshold,
    )
    return Measured(strength, added)


def _differing(
    task: LoadedTask,
    sandbox: Sandbox,
    mutant: javascript_mutants.Mutant,
    searched: Sequence[node_harvest.Recorded],
    timeout_s: float,
) -> frozenset[int]:
    """The searched calls (by position) on which `mutant` differs from the original."""
    if not searched:
        return frozenset()
    candidate = javascript_mutants.mutant_file(task.original_source(), mutant)
    settings = node.NodeSettings(timeout_s=timeout_s, memory_mb=task.hidden.grading.memory_mb)
    where = graded.task_target(task)
    calls = [r.call for r in searched]
    tree = task.repo.tree
    run = node.run_node(sandbox, tree, where, calls, candidate=candidate, settings=settings)
    pairs = zip(searched, run.outcomes, strict=True)
    return frozenset(
        n for n, (r, got) in enumerate(pairs) if graded.compare_node(r.outcome, got) is not None
    )
