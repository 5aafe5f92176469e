"""Task strength at gen time: mutants of the reference graded as candidates (docs/design.md §4).

1. Up to `MUTANTS` mutants of the reference (`replicate.gen.mutants`) are spliced and run on
   the task's hidden inputs exactly as a candidate would be (hash seed 0), with a total time limit
   scaled to the reference's own run (a mutant that loops is killed, by its timeouts, in seconds).
   A mutant is killed when any hidden input differs (the reward falls below 1) or it cannot be
   run at all (it breaks the module's import); an infrastructure failure counts neither way.
2. Survivors are hunted (`replicate.gen.survivors`): more inputs are generated from the traced calls
   (`replicate.inputs.widening.widen`, a bigger budget, another seed), the reference runs on them
   twice (hash seeds 1 and 2, the clock moved ahead) and only inputs with one deterministic,
   comparable, quick, compact outcome are kept, as golden outputs are.  Each survivor runs on
   those; a few inputs that kill the most survivors (greedily, at most `PER_SURVIVOR` per
   survivor and `MAX_ADDED` in all, re-checked against the reference under seed 0) are returned
   to join the hidden inputs.  Survivors nothing kills are reported as likely equivalent.
3. `rejected` says whether the final kill rate is below the task's threshold.
"""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from replicate.batch import LoadedTask, StoredOutcome
from replicate.core import CallInput, DropReason, GradingSettings, Span, SpliceError, Strength
from replicate.executors import map_in_order
from replicate.gen.golden import Golden
from replicate.gen.lines import keep_line_count
from replicate.gen.mutants import FEW, Mutant, mutants
from replicate.gen.survivors import (
    NOTHING,
    Reference,
    Search,
    confirmed,
    joined,
    pick_killers,
    reference_run,
    search,
)
from replicate.grading import compare_outcome, original_source, stubbed_source
from replicate.inputs import Budget
from replicate.jail import (
    Jail,
    JailRun,
    Until,
    WarmPool,
    WarmStart,
    is_result,
    wire,
)

Outcome = wire.Outcome
MUTANTS = 12  # per task at gen time (bench/strength.py grades more)
SEARCH = Budget(widened=300, edge=60)
MAX_ADDED = 20
DEFAULT_MIN_KILL_RATE = 0.5  # `gen` drops a task whose hidden inputs kill fewer of its mutants
PER_SURVIVOR = 2
MIN_MUTANT_TOTAL_S = 10.0  # a mutant's whole run may take this long, or 10x the reference's
# A mutant's call may take this many times the reference's slowest call (at least
# `MUTANT_CALL_S`, at most the task's own limit) before it counts as a timeout, and so as
# killed: a mutant that slow has all but always made a loop that never ends, and waiting out
# the task's limit (1 s or more) on each such mutant was a quarter of a gen's CPU.
MUTANT_CALL_FACTOR = 25.0
MUTANT_CALL_S = 0.25


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
class Assessment:
    strength: Strength
    runs: tuple[MutantRun, ...]  # on the hidden inputs as minted
    added: tuple[CallInput, ...]
    added_expected: Mapping[int, StoredOutcome]
    added_times: tuple[float, ...]
    survivors: tuple[Mutant, ...]  # not killed even by the searched inputs


# ---------------------------------------------------------------- mutants


def reference_definition(task: LoadedTask) -> str:
    """The target's whole (decorated) definition, dedented."""
    return definition_text(original_source(task), task.hidden.target.def_span)


def definition_text(source: bytes, span: Span) -> str:
    """The definition at `span` of `source`, dedented.  The span of a decorated method starts at
    its `@`, past the line's indentation: that line gets its indentation back (cut at the `@`,
    the decorator sat at column 0 and the `def` below it indented, the text did not parse, and
    such a target was graded against no mutants at all).  An undecorated one starts at `def`,
    at column 0, and its body parses as it stands."""
    text = source[span.start_byte : span.end_byte].decode("utf-8")
    lead = source[source.rfind(b"\n", 0, span.start_byte) + 1 : span.start_byte]
    if text.startswith("@") and not lead.strip(b" \t"):
        text = lead.decode("utf-8") + text
    return textwrap.dedent(text)


def task_mutants(task: LoadedTask, limit: int = MUTANTS, seed: int = 0) -> list[Mutant]:
    try:
        definition = reference_definition(task)
        found = mutants(definition, limit=limit, seed=seed)
        if len(found) < FEW:  # a one-line body: the call operators join in
            found = mutants(definition, limit=limit, seed=seed, extra=True)
    except (SyntaxError, StopIteration, ValueError):
        return []
    return found


def spliced_mutant(task: LoadedTask, mutant: Mutant) -> bytes | None:
    """The target file with the mutant in place (as a candidate's completion is spliced, but
    not compiled here: a mutant that does not compile fails to import in the jail, and is
    "refused" as it would be here)."""
    target, original = task.hidden.target, task.original_source()
    direct = task.language().replace_definition(original, mutant.text, target)
    return direct if direct is not None else spliced_into_stub(task, mutant)


def spliced_into_stub(task: LoadedTask, mutant: Mutant) -> bytes | None:
    """`spliced_mutant` through the candidates' splice: the mutant put into the stubbed file,
    padded to the original's line count (`replicate.gen.lines`)."""
    stubbed, target, original = stubbed_source(task), task.hidden.target, task.original_source()
    try:
        program = task.language().splice(stubbed, mutant.text, target, check=False)
    except SpliceError:
        return None
    rest = original[target.body_span.end_byte :]  # the file after the target's body
    after = rest[rest.find(b"\n") :] if b"\n" in rest else b""  # the lines after the def's
    if not program.endswith(after):
        return program
    return keep_line_count(program, len(program) - len(after), original)


def mutant_settings(
    task: LoadedTask, reference_s: float, slowest_s: float | None = None
) -> GradingSettings:
    """The task's settings with a total limit scaled to the reference's run and, when the
    reference's slowest call on the inputs is known (`slowest_s`), a call limit scaled to it."""
    grading = task.hidden.grading
    total = min(grading.total_timeout_s, max(MIN_MUTANT_TOTAL_S, 10 * reference_s))
    update: dict[str, float] = {"total_timeout_s": total}
    if slowest_s is not None:
        update["call_timeout_s"] = _call_limit(task, slowest_s)
    return grading.model_copy(update=update)


def _call_limit(task: LoadedTask, slowest_s: float) -> float:
    """A mutant's call limit for inputs on which the reference's slowest call took `slowest_s`."""
    scaled = round(max(MUTANT_CALL_S, MUTANT_CALL_FACTOR * slowest_s), 3)
    return min(task.hidden.grading.call_timeout_s, scaled)


def run_mutants(
    task: LoadedTask,
    found: Sequence[Mutant],
    jail: Jail,
    inputs: Sequence[CallInput],
    expected: Mapping[int, StoredOutcome],
    settings: GradingSettings,
    workers: int = 1,
    first_wrong: bool = False,
) -> list[MutantRun]:
    """Grade each mutant on `inputs`, each in its own jailed process (started ahead of time
    where the sandbox can, `workers` at a time).  With `first_wrong`, a run (in a series too)
    ends at the mutant's first wrong answer (it is killed; `differing` holds the inputs seen
    wrong by then): a mutant that loops costs one call's limit instead of the run's, and a
    killed one no more than it took to be seen wrong."""
    sandbox, pool = jail.sandbox, None
    if isinstance(sandbox, WarmStart) and sandbox.isolated and found:
        # a spare: the next mutant never waits; none started beyond the mutants to grade
        starts = len(found) if jail.ctx.speedups else None
        pool = WarmPool(sandbox, per_key=workers + 1, starts=starts)
    until = wrong_answer(expected, settings) if first_wrong else None
    try:
        job = (inputs, expected, settings)
        return _run_mutants(task, found, jail.warm(pool), job, workers, until)
    finally:
        if pool is not None:
            pool.close()


def wrong_answer(expected: Mapping[int, StoredOutcome], settings: GradingSettings) -> Until:
    """A `run_calls` `until`: the result frame of an input whose outcome is not the expected."""

    def wrong(frame: wire.Frame) -> bool:
        index = frame.get("i")
        if not is_result(frame) or type(index) is not int or index not in expected:
            return False
        return compare_outcome(expected[index], frame["outcome"], settings) is not None

    return wrong


def _run_mutants(
    task: LoadedTask,
    found: Sequence[Mutant],
    jail: Jail,
    job: tuple[Sequence[CallInput], Mapping[int, StoredOutcome], GradingSettings],
    workers: int,
    until: Until | None,
) -> list[MutantRun]:
    inputs, expected, settings = job
    target = task.hidden.target
    texts = [spliced_mutant(task, m) for m in found]
    ours = [text for text in texts if text is not None]
    # a series ends a mutant's run at its first timeout, as `until` would (a timeout is wrong)
    in_series = iter(
        jail.run_series(
            target, inputs, settings, ours, workers=workers, until_timeout=True, until=until
        )
    )
    series = [None if text is None else next(in_series) for text in texts]

    def one(item: tuple[Mutant, bytes | None, JailRun | None]) -> MutantRun:
        mutant, spliced, run = item
        if spliced is None:
            return MutantRun(mutant, "refused")
        if run is None:
            run = jail.run(target, inputs, settings, override=spliced, hash_seed=0, until=until)
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

    items = list(zip(found, texts, series, strict=True))
    if workers <= 1 or all(run is not None for run in series):
        return [one(item) for item in items]
    with ThreadPoolExecutor(max_workers=workers) as threads:
        return list(map_in_order(threads, one, items))


# ---------------------------------------------------------------- assess


def assess(
    task: LoadedTask,
    jail: Jail,
    *,
    threshold: float = 0.0,
    limit: int = MUTANTS,
    budget: Budget = SEARCH,
    max_added: int = MAX_ADDED,
    workers: int = 1,
    reference_s: float | None = None,
    slowest_s: float | None = None,
) -> Assessment | str:
    """Grade the reference's mutants on the task and search inputs that kill the survivors;
    a str when the infrastructure failed.  `reference_s`: how long a run of the reference on
    the hidden inputs took, when the caller timed one (the reference's own run, which gives
    the seeds of the search, is then made only when some mutant survives); `slowest_s`: its
    slowest call on them, which scales the mutants' call limit."""
    reference: Reference | str | None = None
    if reference_s is None:
        reference = _seeded(task, jail)
        if isinstance(reference, str):
            return reference
        reference_s, slowest_s = reference.wall_s, reference.slowest_s
    settings = mutant_settings(task, reference_s, slowest_s)
    found = task_mutants(task, limit)
    runs = run_mutants(
        task, found, jail, task.inputs, task.expected, settings, workers, first_wrong=True
    )
    graded = [r for r in runs if r.status != "infra"]
    alive = [r for r in graded if not r.killed]
    added: list[CallInput] = []
    searched = NOTHING
    hunted = list(alive)
    if alive and reference is None:
        reference = _seeded(task, jail)
        if isinstance(reference, str):
            return reference
    if alive and isinstance(reference, Reference) and reference.seeds:
        searched = search(task, jail, reference, budget)
        on_searched = _for_searched(task, settings, searched)
        hunted = _hunt(task, jail, alive, searched, on_searched, workers)
        order = [i.index for i in searched.inputs]
        chosen = pick_killers([r.differing for r in hunted], order, PER_SURVIVOR, max_added)
        added = confirmed(task, jail, searched, chosen)
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


def _for_searched(task: LoadedTask, settings: GradingSettings, searched: Search) -> GradingSettings:
    """The mutants' settings for the searched inputs: their call limit scaled again, to the
    reference's slowest call on those (it may be slower on them than on the task's own), never
    past the task's own limit."""
    slowest = max(searched.times.values(), default=0.0)
    limit = max(settings.call_timeout_s, _call_limit(task, slowest))
    return settings.model_copy(update={"call_timeout_s": limit})


def _seeded(task: LoadedTask, jail: Jail) -> Reference | str:
    """The reference's run that gives the survivor search its seeds, or why it failed."""
    found = reference_run(task, jail)
    return f"{DropReason.STRENGTH_RUN_FAILED}: {found}" if isinstance(found, str) else found


def _hunt(
    task: LoadedTask,
    jail: Jail,
    alive: Sequence[MutantRun],
    searched: Search,
    settings: GradingSettings,
    workers: int,
) -> list[MutantRun]:
    if not searched.inputs:
        return [dataclasses.replace(r, differing=frozenset()) for r in alive]
    mutants_alive = [r.mutant for r in alive]
    args = (searched.inputs, searched.expected, settings, workers)
    return run_mutants(task, mutants_alive, jail, *args)


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
        return DropReason.KILL_RATE_BELOW.says(f"{limit:.2f}")  # the rate: `strength_detail`
    return None


def with_added(g: Golden, assessment: Assessment) -> Golden:
    """The golden outputs with the inputs that kill survivors added (for `mint`)."""
    return joined(g, assessment.added, assessment.added_expected, assessment.added_times)
