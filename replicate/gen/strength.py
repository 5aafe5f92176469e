"""Task strength at gen time: mutants of the reference graded as candidates (BRIEF §4).

1. Up to `MUTANTS` mutants of the reference (`replicate.verifiers.mutants`) are spliced and run on
   the task's hidden inputs exactly as a candidate would be (hash seed 0), with a total time limit
   scaled to the reference's own run (a mutant that loops is killed, by its timeouts, in seconds).
   A mutant is killed when any hidden input differs (the reward falls below 1) or it cannot be
   run at all (it breaks the module's import); an infrastructure failure counts neither way.
2. Survivors are hunted: more inputs are generated from the traced calls
   (`replicate.verifiers.inputs.widen`, a bigger budget, another seed), the reference runs on them
   twice (hash seeds 1 and 2, the clock moved ahead) and only inputs with one deterministic,
   comparable, quick, compact outcome are kept, as golden outputs are.  Each survivor runs on
   those; a few inputs that kill the most survivors (greedily, at most `PER_SURVIVOR` per
   survivor and `MAX_ADDED` in all, re-checked against the reference under seed 0) are returned
   to join the hidden inputs.  Survivors nothing kills are reported as likely equivalent.
3. `rejected` says whether the final kill rate is below the task's threshold.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from replicate.batch.store import LoadedTask
from replicate.core.records import CallInput, GradingSettings, Strength, Target
from replicate.core.splice import SpliceError, splice
from replicate.gen.golden import (
    BLOW_UPS,
    BULKY_BYTES,
    CLOCK_SHIFT_DAYS,
    SLOW_S,
    WIDEN_SETTINGS,
    Golden,
    render_call,
)
from replicate.harness.jail import RepoContext, run_calls
from replicate.harness.sandbox.base import Sandbox, WarmStart
from replicate.harness.warm import WarmPool
from replicate.verifiers.compare import compare_outcome, is_gradable, same_outcome
from replicate.verifiers.grader import original_source, stubbed_source
from replicate.verifiers.inputs import Budget, Seed, widen
from replicate.verifiers.mutants import Mutant, mutants

Outcome = Mapping[str, Any]
MUTANTS = 30
SEARCH = Budget(widened=300, edge=60)
MAX_ADDED = 20
PER_SURVIVOR = 2
MIN_MUTANT_TOTAL_S = 10.0  # a mutant's whole run may take this long, or 10x the reference's
SALT = "strength"


@dataclass(frozen=True)
class MutantRun:
    """One mutant graded on a set of inputs."""

    mutant: Mutant
    status: str  # "killed", "survived", "refused" (does not splice or import), "infra"
    differing: frozenset[int] = frozenset()  # indices of the inputs it gets wrong
    spliced: bytes | None = None

    @property
    def killed(self) -> bool:
        return self.status in ("killed", "refused")


@dataclass(frozen=True)
class Search:
    """Deterministic generated inputs and the reference's outcomes on them."""

    inputs: tuple[CallInput, ...]
    expected: Mapping[int, Outcome]
    times: Mapping[int, float]
    tried: int


@dataclass(frozen=True)
class Assessment:
    strength: Strength
    runs: tuple[MutantRun, ...]  # on the hidden inputs as minted
    added: tuple[CallInput, ...]
    added_expected: Mapping[int, Outcome]
    added_times: tuple[float, ...]
    survivors: tuple[Mutant, ...]  # not killed even by the searched inputs


# ---------------------------------------------------------------- mutants


def reference_definition(task: LoadedTask) -> str:
    """The target's whole (decorated) definition, dedented."""
    span = task.hidden.target.def_span
    text = original_source(task)[span.start_byte : span.end_byte].decode("utf-8")
    return textwrap.dedent(text)


def task_mutants(task: LoadedTask, limit: int = MUTANTS, seed: int = 0) -> list[Mutant]:
    try:
        return mutants(reference_definition(task), limit=limit, seed=seed)
    except (SyntaxError, StopIteration, ValueError):
        return []


def spliced_mutant(task: LoadedTask, mutant: Mutant) -> bytes | None:
    """The target file with the mutant in place (as a candidate's completion is spliced)."""
    try:
        return splice(stubbed_source(task), mutant.text, task.hidden.target)
    except SpliceError:
        return None


def mutant_settings(task: LoadedTask, reference_s: float) -> GradingSettings:
    """The task's settings with a total limit scaled to the reference's run."""
    grading = task.hidden.grading
    total = min(grading.total_timeout_s, max(MIN_MUTANT_TOTAL_S, 10 * reference_s))
    return grading.model_copy(update={"total_timeout_s": total})


def run_mutants(
    task: LoadedTask,
    found: Sequence[Mutant],
    ctx: RepoContext,
    sandbox: Sandbox,
    inputs: Sequence[CallInput],
    expected: Mapping[int, Outcome],
    settings: GradingSettings,
    workers: int = 1,
) -> list[MutantRun]:
    """Grade each mutant on `inputs`, each in its own jailed process (started ahead of time
    where the sandbox can, `workers` at a time)."""
    pool = None
    if isinstance(sandbox, WarmStart) and sandbox.isolated and found:
        pool = WarmPool(sandbox, per_key=max(1, workers))
    try:
        return _run_mutants(task, found, ctx, sandbox, inputs, expected, settings, workers, pool)
    finally:
        if pool is not None:
            pool.close()


def _run_mutants(
    task: LoadedTask,
    found: Sequence[Mutant],
    ctx: RepoContext,
    sandbox: Sandbox,
    inputs: Sequence[CallInput],
    expected: Mapping[int, Outcome],
    settings: GradingSettings,
    workers: int,
    pool: WarmPool | None,
) -> list[MutantRun]:
    target = task.hidden.target
    texts = [spliced_mutant(task, m) for m in found]

    def one(pair: tuple[Mutant, bytes | None]) -> MutantRun:
        mutant, spliced = pair
        if spliced is None:
            return MutantRun(mutant, "refused")
        run = run_calls(
            ctx, target, inputs, sandbox, settings, override=spliced, hash_seed=0, pool=pool
        )
        if run.infra_problem():
            return MutantRun(mutant, "infra", spliced=spliced)
        if run.parsed.import_error is not None:
            return MutantRun(mutant, "refused", spliced=spliced)
        got = run.parsed.outcomes
        differing = frozenset(
            i.index
            for i in inputs
            if compare_outcome(expected[i.index], got.get(i.index), settings) is not None
        )
        return MutantRun(mutant, "killed" if differing else "survived", differing, spliced)

    pairs = list(zip(found, texts, strict=True))
    if workers <= 1:
        return [one(pair) for pair in pairs]
    with ThreadPoolExecutor(max_workers=workers) as threads:
        return list(threads.map(one, pairs))


# ---------------------------------------------------------------- survivor search


def _strip(outcome: Outcome) -> dict[str, Any]:
    return {k: v for k, v in outcome.items() if k not in ("args_in", "kwargs_in", "t")}


@dataclass(frozen=True)
class Reference:
    """The reference's run on the hidden inputs: seeds to generate from, and its timing."""

    seeds: tuple[Seed, ...]
    wall_s: float  # the whole jailed run
    slowest_s: float  # the slowest single call


def reference_run(task: LoadedTask, ctx: RepoContext, sandbox: Sandbox) -> Reference | str:
    """Run the reference on the hidden inputs, reporting the arguments as the runner saw them
    (the traced ones become seeds); a str on infrastructure trouble."""
    target = task.hidden.target
    started = time.monotonic()
    run = run_calls(
        ctx, target, task.inputs, sandbox, task.hidden.grading, hash_seed=1, encode_inputs=True
    )
    elapsed = time.monotonic() - started
    problem = run.infra_problem() or run.parsed.import_error
    if problem:
        return problem
    seeds = []
    outcomes = run.parsed.outcomes
    for item in task.inputs:
        outcome = outcomes.get(item.index)
        if item.provenance != "traced" or outcome is None or "args_in" not in outcome:
            continue
        returned = outcome.get("status") == "returned"
        args = tuple(outcome.get("args_in") or ())
        seeds.append(Seed(item, args, dict(outcome.get("kwargs_in") or {}), returned))
    slowest = max((float(o.get("t", 0.0)) for o in outcomes.values()), default=0.0)
    return Reference(tuple(seeds), elapsed, slowest)


def salted(target: Target, salt: str) -> Target:
    """The target as `widen` sees it with another seed: `task_seed` hashes the symbol, so the
    module name (used for nothing else there) carries the salt.  Never run a salted target."""
    return target.model_copy(update={"module": f"{target.module}\x00{salt}"})


def search(
    task: LoadedTask,
    ctx: RepoContext,
    sandbox: Sandbox,
    reference: Reference,
    budget: Budget = SEARCH,
    salt: str = SALT,
    first_index: int | None = None,
) -> Search:
    """Generate inputs with a salted seed and keep those with one deterministic outcome."""
    target = task.hidden.target
    start = first_index if first_index is not None else _next_index(task)
    made = widen(salted(target, salt), reference.seeds, start, budget).inputs
    known = {i.pickle_b64 for i in task.inputs}
    made = tuple(i for i in made if i.pickle_b64 not in known)
    if not made:
        return Search((), {}, {}, 0)
    first = _outcomes(ctx, target, made, sandbox, 1, 0)
    slow_s = max(SLOW_S, 3 * reference.slowest_s)
    fine = [i for i in made if _usable(first.get(i.index), slow_s)]
    second = _outcomes(ctx, target, fine, sandbox, 2, CLOCK_SHIFT_DAYS)
    kept: list[CallInput] = []
    expected: dict[int, Outcome] = {}
    times: dict[int, float] = {}
    for item in fine:
        a, b = first[item.index], second.get(item.index)
        if b is None or not same_outcome(_strip(a), _strip(b)):
            continue
        stratum = "raises" if a.get("status") == "raised" else item.provenance
        kept.append(item.model_copy(update={"stratum": stratum, "call": render_call(target, a)}))
        expected[item.index] = _strip(a)
        times[item.index] = max(float(a.get("t", 0.0)), float(b.get("t", 0.0)))
    return Search(tuple(kept), expected, times, len(made))


def _next_index(task: LoadedTask) -> int:
    return max((i.index for i in task.inputs), default=-1) + 1


def _outcomes(
    ctx: RepoContext,
    target: Target,
    inputs: Sequence[CallInput],
    sandbox: Sandbox,
    hash_seed: int,
    clock_shift_days: int,
) -> dict[int, Outcome]:
    """The reference's outcomes; a run that dies midway is resumed after the input it died on."""
    outcomes: dict[int, Outcome] = {}
    pending = list(inputs)
    for _ in range(8):
        if not pending:
            break
        run = run_calls(
            ctx,
            target,
            pending,
            sandbox,
            WIDEN_SETTINGS,
            hash_seed=hash_seed,
            encode_inputs=True,
            clock_shift_days=clock_shift_days,
        )
        if run.infra_problem() or run.parsed.import_error is not None:
            break
        outcomes.update(run.parsed.outcomes)
        pending = [i for i in pending if i.index not in outcomes][1:]
    return outcomes


def _usable(outcome: Outcome | None, slow_s: float) -> bool:
    if outcome is None or outcome.get("status") not in ("returned", "raised"):
        return False
    exc = outcome.get("exc")
    if isinstance(exc, Mapping) and exc.get("type") in BLOW_UPS:
        return False
    if float(outcome.get("t", 0.0)) > slow_s or not is_gradable(outcome, WIDEN_SETTINGS):
        return False
    return len(json.dumps(_strip(outcome))) <= BULKY_BYTES


def pick_killers(
    runs: Sequence[MutantRun], order: Sequence[int], per_survivor: int, limit: int
) -> list[int]:
    """Input indices that kill the survivors: greedily the input killing most survivors not yet
    killed `per_survivor` times, ties broken by `order` (the generation order)."""
    need = {n: per_survivor for n, r in enumerate(runs) if r.differing}
    rank = {index: n for n, index in enumerate(order)}
    chosen: list[int] = []
    while need and len(chosen) < limit:
        gains: dict[int, int] = {}
        for n in need:
            for index in runs[n].differing - set(chosen):
                gains[index] = gains.get(index, 0) + 1
        if not gains:
            break
        best = min(gains, key=lambda i: (-gains[i], rank.get(i, len(rank))))
        chosen.append(best)
        for n in [n for n in need if best in runs[n].differing]:
            need[n] -= 1
            if need[n] == 0:
                del need[n]
    return chosen


# ---------------------------------------------------------------- assess


def assess(
    task: LoadedTask,
    ctx: RepoContext,
    sandbox: Sandbox,
    *,
    threshold: float = 0.0,
    limit: int = MUTANTS,
    budget: Budget = SEARCH,
    max_added: int = MAX_ADDED,
    workers: int = 1,
) -> Assessment | str:
    """Grade the reference's mutants on the task and search inputs that kill the survivors;
    a str when the infrastructure failed."""
    reference = reference_run(task, ctx, sandbox)
    if isinstance(reference, str):
        return f"strength: reference run failed: {reference}"
    settings = mutant_settings(task, reference.wall_s)
    found = task_mutants(task, limit)
    runs = run_mutants(task, found, ctx, sandbox, task.inputs, task.expected, settings, workers)
    graded = [r for r in runs if r.status != "infra"]
    alive = [r for r in graded if not r.killed]
    added: list[CallInput] = []
    searched = Search((), {}, {}, 0)
    hunted = list(alive)
    if alive and reference.seeds:
        searched = search(task, ctx, sandbox, reference, budget)
        hunted = _hunt(task, ctx, sandbox, alive, searched, settings, workers)
        added = _confirmed(task, ctx, sandbox, searched, hunted, max_added)
    survivors = [r.mutant for r in hunted if not r.differing]
    equivalent = len(survivors) if searched.inputs else 0
    killed_before = len(graded) - len(alive)
    still = _still_alive(hunted, added)
    strength = _strength(len(graded), killed_before, still, equivalent, added, searched)
    strength = strength.model_copy(update={"threshold": threshold})
    return Assessment(
        strength,
        tuple(runs),
        tuple(added),
        {i.index: searched.expected[i.index] for i in added},
        tuple(searched.times[i.index] for i in added),
        tuple(survivors),
    )


def _hunt(
    task: LoadedTask,
    ctx: RepoContext,
    sandbox: Sandbox,
    alive: Sequence[MutantRun],
    searched: Search,
    settings: GradingSettings,
    workers: int,
) -> list[MutantRun]:
    if not searched.inputs:
        return [dataclasses.replace(r, differing=frozenset()) for r in alive]
    mutants_alive = [r.mutant for r in alive]
    args = (searched.inputs, searched.expected, settings, workers)
    return run_mutants(task, mutants_alive, ctx, sandbox, *args)


def _confirmed(
    task: LoadedTask,
    ctx: RepoContext,
    sandbox: Sandbox,
    searched: Search,
    hunted: Sequence[MutantRun],
    max_added: int,
) -> list[CallInput]:
    """The chosen killing inputs on which the reference also matches itself under seed 0."""
    order = [i.index for i in searched.inputs]
    chosen = set(pick_killers(hunted, order, PER_SURVIVOR, max_added))
    picked = [i for i in searched.inputs if i.index in chosen]
    if not picked:
        return []
    target = task.hidden.target
    run = run_calls(ctx, target, picked, sandbox, WIDEN_SETTINGS, hash_seed=0)
    got = run.parsed.outcomes
    return [
        i
        for i in picked
        if compare_outcome(searched.expected[i.index], got.get(i.index), WIDEN_SETTINGS) is None
    ]


def _still_alive(hunted: Sequence[MutantRun], added: Sequence[CallInput]) -> int:
    """Survivors of the minted inputs that no added input kills."""
    indices = {i.index for i in added}
    return sum(1 for r in hunted if not (r.differing & indices))


def _strength(
    mutants_graded: int,
    killed_before: int,
    still_alive: int,
    equivalent: int,
    added: Sequence[CallInput],
    searched: Search,
) -> Strength:
    killed = mutants_graded - still_alive
    rate = killed / mutants_graded if mutants_graded else 1.0
    return Strength(
        mutants=mutants_graded,
        killed=killed,
        kill_rate=round(rate, 6),
        killed_before=killed_before,
        likely_equivalent=equivalent,
        added_inputs=len(added),
        searched_inputs=len(searched.inputs),
        threshold=0.0,
    )


def rejected(strength: Strength, threshold: float | None = None) -> str | None:
    """Why the task is too weak to mint (its kill rate is below the threshold), or None."""
    limit = strength.threshold if threshold is None else threshold
    if strength.mutants and strength.kill_rate < limit:
        return f"mutant kill rate {strength.kill_rate:.2f} below {limit:.2f}"
    return None


def with_added(g: Golden, assessment: Assessment) -> Golden:
    """The golden outputs with the inputs that kill survivors added (for `mint`), numbered
    after every input of `g` (the examples held out of the hidden inputs included)."""
    if not assessment.added:
        return g
    start = max((i.index for i in g.inputs), default=-1) + 1
    added = [i.model_copy(update={"index": start + n}) for n, i in enumerate(assessment.added)]
    expected = {
        start + n: assessment.added_expected[i.index] for n, i in enumerate(assessment.added)
    }
    times = assessment.added_times
    return dataclasses.replace(
        g,
        inputs=(*g.inputs, *added),
        expected={**g.expected, **expected},
        max_call_s=max(g.max_call_s, *times),
        total_call_s=g.total_call_s + sum(times),
    )
