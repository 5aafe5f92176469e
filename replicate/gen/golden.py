"""Golden outputs: run the reference on every input, twice, with different hash seeds.

1. The traced inputs run with hash seed 1; the runner also reports each call's arguments.
2. From those arguments the trusted side generates widened and edge inputs
   (`replicate.inputs.widening`), which run with hash seed 1 under a short per-call limit.
3. Every input still standing runs again with hash seed 2 and the wall clock moved ahead.

An input is kept when both runs give an outcome, the outcome can be compared (nothing opaque, too
large or unverifiable), and the two runs agree exactly.  A generated input is also dropped when
the reference hangs, is slow, or blows up on it (RecursionError, MemoryError, SystemError): such
behaviour is no contract a re-implementation must share; and when its outcome is bulky (an endless
iterator's first 10,000 items, say), which would cost storage and grading time for little.
A run that dies midway is resumed after the input it died on, which is dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from replicate.batch import StoredOutcome
from replicate.core import CallInput, DropReason, GradingSettings, Target
from replicate.gen.settings import GOLDEN_SETTINGS, leashed
from replicate.gen.sizes import BULKY_BYTES, Sizes, bulky_outcome, strip_inputs
from replicate.gen.target_detail import example
from replicate.grading import is_gradable, same_outcome
from replicate.inputs import Budget, Seed, cut_down, other_selves, render_call, widen
from replicate.jail import Jail, JailRun, wire

__all__ = ["BULKY_BYTES", "Golden", "Sizes", "golden", "render_call", "strip_inputs"]

SLOW_S = 0.1  # a generated input on which the reference takes longer (and 3x the traced) is dropped
# Timings are wall-clock, so a busy machine inflates them: an input is "too slow" only when both
# runs took longer (the faster run counts), and the first run alone drops an input only when it
# is far beyond the limit.  So a passing hiccup does not change which inputs a batch keeps.
SLOW_FIRST_RUN = 5.0
# All of a task's expected outcomes together: every grade (and every mutant at gen time) sends
# and compares them all.  Past it, the inputs with the largest outcomes go first.
TASK_EXPECTED_BYTES = 2_000_000
# The reference's time on all of a task's hidden inputs (each input's faster run): every grade,
# and every mutant at gen time, pays about as much.  Past it, the inputs slower than
# `SLOW_INPUT_S` go, slowest first (boltons' `update_wrapper` returned an async function on a
# traced call, whose probes slept for seconds: every grade of that task waited on them).
TASK_CALL_S = 2.0
SLOW_INPUT_S = 0.5
# So the first run stops a traced call there: an input slower than the whole budget goes anyway
# (more-itertools has two traced calls that hang, each waited out for 5 s in every gen).
FIRST_RUN_SETTINGS = GOLDEN_SETTINGS.model_copy(update={"call_timeout_s": TASK_CALL_S})
BLOW_UPS = frozenset({"builtins.RecursionError", "builtins.MemoryError", "builtins.SystemError"})
# The second run also moves the wall clock ahead, so an output that depends on "now" (a
# doctest's `datetime.utcnow()` compared with the current time, say) shows as nondeterministic.
CLOCK_SHIFT_DAYS = 400
MAX_RESUMES = 8
# Calls cut from those whose outcome is too large for a generated input (`cut_down`), at most
MAX_CUT = 24

Outcome = wire.Outcome


@dataclass(frozen=True)
class Golden:
    inputs: tuple[CallInput, ...]
    expected: Mapping[int, StoredOutcome]
    encodable: int  # traced inputs that loaded and gave a comparable outcome in the first run
    drops: Counter[str]
    max_call_s: float
    total_call_s: float
    infra: str | None = None
    generatable: bool = False  # some traced argument holds a plain value to generate from
    generated: int = 0  # generated inputs tried
    generated_drops: Counter[str] = field(default_factory=Counter)
    examples: Mapping[str, str] = field(default_factory=dict)  # a traced drop reason's instance


def run_resuming(
    jail: Jail,
    target: Target,
    inputs: Sequence[CallInput],
    seed: int,
    clock_shift_days: int = 0,
    settings: GradingSettings = GOLDEN_SETTINGS,
) -> tuple[dict[int, Outcome], Counter[str], str | None]:
    """All outcomes of one seed; an input on which the process dies is dropped and skipped.

    A run that hits its total time limit after some progress goes on where it stopped without
    dropping anything (a busy machine, not the input, ran out of time); only a run that makes
    no progress at all drops the input it is stuck on."""
    outcomes: dict[int, Outcome] = {}
    drops: Counter[str] = Counter()
    pending = list(inputs)
    for _ in range(MAX_RESUMES):
        if not pending:
            break
        run: JailRun = jail.run(
            target,
            pending,
            settings,
            hash_seed=seed,
            encode_inputs=True,
            clock_shift_days=clock_shift_days,
        )
        if run.infra_problem():
            return outcomes, drops, run.infra_problem()
        if run.parsed.import_error is not None:
            why = f"{DropReason.REFERENCE_DOES_NOT_IMPORT}: {run.parsed.import_error}"
            return outcomes, drops, why
        outcomes.update(run.parsed.outcomes)
        progressed = any(item.index in outcomes for item in pending)
        pending = [item for item in pending if item.index not in outcomes]
        if not pending:
            break
        if run.result.timed_out and progressed:
            continue
        drops[DropReason.HANGS_OR_CRASHES] += 1
        pending = pending[1:]
    return outcomes, drops, None


def _first_problem(first: Outcome | None) -> DropReason | None:
    """Why the first run's outcome cannot be golden, or None."""
    if first is None:
        return DropReason.HANGS_OR_CRASHES
    status = first.get("status")
    if status == "load_error":
        return DropReason.INPUT_DOES_NOT_LOAD
    if status == "timeout":
        return DropReason.HANGS
    if not is_gradable(first, GOLDEN_SETTINGS):
        return DropReason.NOT_COMPARABLE  # opaque, too large or unverifiable: `example` says
    return None


def generated_problem(
    outcome: Outcome | None, slow_s: float, bulky: Callable[[Outcome], bool] | None = None
) -> DropReason | None:
    """Why a generated input's first outcome cannot be golden, or None (`bulky`: whether the
    outcome is too large, `bulky_outcome` when not given)."""
    if outcome is not None and outcome.get("status") == "timeout":
        return DropReason.TOO_SLOW  # it ran past the first run's limit (`leashed`)
    problem = _first_problem(outcome)
    if problem or outcome is None:
        return problem
    exc = outcome.get("exc")
    if isinstance(exc, Mapping) and exc.get("type") in BLOW_UPS:
        return DropReason.BLOWS_UP
    if float(outcome.get("t", 0.0)) > slow_s:
        return DropReason.TOO_SLOW
    if (bulky or bulky_outcome)(outcome):
        return DropReason.OUTCOME_TOO_LARGE
    return None


def _seeds(inputs: Sequence[CallInput], first: Mapping[int, Outcome], sizes: Sizes) -> list[Seed]:
    """The seeds of inputs whose first outcome could be golden (the caller checked it)."""
    found = [seed_of(i, first[i.index], sizes) for i in inputs]
    return [seed for seed in found if seed is not None]


def seed_of(item: CallInput, outcome: Outcome, sizes: Sizes | None = None) -> Seed | None:
    """The seed an input's reference outcome makes, unless that outcome is too large for a
    generated input: calls varied from it answer as largely and are dropped, each after its runs
    (an infinite iterator the tests pass, consumed to the item cap, made every varied call cost
    the cap's worth, in golden runs, mutants and the survivor search alike)."""
    bulky = sizes.bulky(item.index) if sizes is not None else bulky_outcome
    return None if bulky(outcome) else Seed.of(item, outcome)


def golden(
    jail: Jail,
    target: Target,
    inputs: Sequence[CallInput],
    budget: Budget | None = None,
    ctors: Sequence[bytes] = (),
) -> Golden:
    """Golden outcomes of the traced inputs and, with a `budget`, of generated ones (`ctors`:
    recorded class calls of a method's class, to build other `self`s from)."""
    first, drops, infra = run_resuming(jail, target, inputs, seed=1, settings=FIRST_RUN_SETTINGS)
    if infra:
        return Golden((), {}, 0, drops, 0.0, 0.0, infra)
    problems = {item.index: _first_problem(first.get(item.index)) for item in inputs}
    traced = [i for i in inputs if problems[i.index] is None]
    examples: dict[str, str] = {}
    for item in inputs:
        problem = problems[item.index]
        if problem:
            drops[problem] += 1
            _note(examples, problem, first.get(item.index), None)
    made, sizes = _Generated(), Sizes.in_batch(jail)
    if target.kind == "method":  # its `self` after the call, which no cut-down makes smaller
        sizes.allow_as_large_as({i.index: first[i.index] for i in traced if i.index in first})
    if budget is not None and traced:
        start = max(i.index for i in inputs) + 1
        made = _generate(jail, target, traced, first, budget, start, sizes, ctors)
        if made.infra:
            return Golden((), {}, 0, drops, 0.0, 0.0, made.infra)
        first = {**first, **made.outcomes}
    rerun = [*traced, *made.kept]
    second, _, infra = run_resuming(jail, target, rerun, seed=2, clock_shift_days=CLOCK_SHIFT_DAYS)
    if infra:
        return Golden((), {}, 0, drops, 0.0, 0.0, infra)
    slow_s = _slow_limit(traced, first, second)
    kept, expected, times = keep(
        target, rerun, (first, second), drops, made.drops, slow_s, examples, sizes
    )
    return Golden(
        tuple(kept),
        expected,
        len(traced),
        drops,
        max(times, default=0.0),
        sum(times),
        None,
        made.generatable,
        made.tried,
        made.drops,
        examples,
    )


def _note(
    examples: dict[str, str], problem: str, first: Outcome | None, second: Outcome | None
) -> None:
    """Keep the first instance of a drop reason that can be put in words."""
    if problem not in examples:
        seen = example(problem, first, second, GOLDEN_SETTINGS)
        if seen:
            examples[problem] = seen


@dataclass(frozen=True)
class _Generated:
    kept: tuple[CallInput, ...] = ()
    outcomes: Mapping[int, Outcome] = field(default_factory=dict)
    drops: Counter[str] = field(default_factory=Counter)
    generatable: bool = False
    tried: int = 0
    infra: str | None = None


def _generate(
    jail: Jail,
    target: Target,
    traced: Sequence[CallInput],
    first: Mapping[int, Outcome],
    budget: Budget,
    start: int,
    sizes: Sizes,
    ctors: Sequence[bytes] = (),
) -> _Generated:
    """Generate inputs (indexed from `start`, their first outcomes measured into `sizes`) from
    the traced calls and run the reference on them once (seed 1): first the traced method calls
    on a `self` built from the other class calls in `ctors`, which then seed the widening with
    the traced calls."""
    slow_s = SLOW_FIRST_RUN * _slow_limit(traced, first, first)
    others = other_selves(traced, ctors, start, budget.built_selves(budget.widened))
    outcomes, _, infra = run_resuming(jail, target, others, 1, settings=leashed(slow_s))
    if infra:
        return _Generated(infra=infra)
    kept, drops = screen(others, outcomes, slow_s, sizes)
    seeds = _seeds([*traced, *kept], {**first, **outcomes}, sizes)
    try:
        widening = widen(target, seeds, start + len(others), budget)
    except Exception as exc:  # noqa: BLE001 - a generator bug costs the widening, not the task
        drops[f"{DropReason.GENERATION_FAILED}: {type(exc).__name__}"] += 1
        return _Generated(tuple(kept), outcomes, drops, bool(kept), len(others))
    made = widening.inputs
    found, _, infra = run_resuming(jail, target, made, seed=1, settings=leashed(slow_s))
    widened, widen_drops = screen(made, found, slow_s, sizes)
    cut = _cut_down(
        jail, target, [*traced, *others, *made], (first, outcomes, found), sizes, slow_s
    )
    return _Generated(
        (*kept, *widened, *cut.kept),
        {**outcomes, **found, **cut.outcomes},
        drops + widen_drops + cut.drops,
        widening.generatable or bool(kept) or bool(cut.kept),
        len(others) + len(made) + cut.tried,
        infra or cut.infra,
    )


def _cut_down(
    jail: Jail,
    target: Target,
    items: Sequence[CallInput],
    runs: Sequence[Mapping[int, Outcome]],
    sizes: Sizes,
    slow_s: float,
) -> _Generated:
    """Calls cut from those of `items` whose first outcome (in one of `runs`) returned a value
    too large for a generated input (`cut_down`), run once; those whose outcome fits kept."""
    bulky = []
    for item in items:
        outcome = next((run[item.index] for run in runs if item.index in run), None)
        if outcome and outcome.get("status") == "returned" and sizes.bulky(item.index)(outcome):
            bulky.append((item, outcome))
    start = max((i.index for i in items), default=0) + 1
    cut = cut_down(target.kind, bulky, start, MAX_CUT)
    found, _, infra = run_resuming(jail, target, cut, seed=1, settings=leashed(slow_s))
    fits, drops = screen(cut, found, slow_s, sizes)
    return _Generated(tuple(fits), found, drops, bool(fits), len(cut), infra)


def _slow_limit(
    traced: Sequence[CallInput], first: Mapping[int, Outcome], second: Mapping[int, Outcome]
) -> float:
    """`SLOW_S`, or 3x the slowest traced call (each call's faster run) when that is more."""
    slowest = max((_time(i, first, second) for i in traced), default=0.0)
    return max(SLOW_S, 3 * slowest)


def _time(item: CallInput, first: Mapping[int, Outcome], second: Mapping[int, Outcome]) -> float:
    """The faster of an input's two runs (the first alone when it has no second)."""
    runs = [o for o in (first.get(item.index), second.get(item.index)) if o is not None]
    return min((float(o.get("t", 0.0)) for o in runs), default=0.0)


def screen(
    made: Sequence[CallInput],
    outcomes: Mapping[int, Outcome],
    slow_s: float,
    sizes: Sizes | None = None,
) -> tuple[list[CallInput], Counter[str]]:
    """The generated inputs the reference can be held to, and why the others were dropped
    (their outcomes measured into `sizes`, for `keep`)."""
    drops: Counter[str] = Counter()
    keep = []
    sizes = Sizes() if sizes is None else sizes
    for item in made:
        problem = generated_problem(outcomes.get(item.index), slow_s, sizes.bulky(item.index))
        if problem:
            drops[problem] += 1
        else:
            keep.append(item)
    return keep, drops


def _second_problem(first: Outcome, second: Outcome | None) -> DropReason | None:
    """Why the second run's outcome breaks an input whose first one could be golden, or None:
    an outcome equal to that first one is as gradable as it (checking it again walked every
    outcome a second time)."""
    if second is None:
        return DropReason.HANGS_OR_CRASHES
    if same_outcome(first, second):
        return None
    return _first_problem(second) or DropReason.NONDETERMINISTIC


def keep(
    target: Target,
    inputs: Sequence[CallInput],
    runs: tuple[Mapping[int, Outcome], Mapping[int, Outcome]],
    drops: Counter[str],
    gen_drops: Counter[str],
    slow_s: float,
    examples: dict[str, str] | None = None,
    sizes: Sizes | None = None,
) -> tuple[list[CallInput], dict[int, StoredOutcome], list[float]]:
    """The inputs whose two runs agree on a comparable outcome (generated ones also quick), their
    expected outcomes and call times (`inputs`: those whose first outcome could be golden); why
    the others were dropped goes to `drops` (traced) or `gen_drops`, with an instance of each
    traced reason to `examples`."""
    first, second = runs
    kept: list[CallInput] = []
    expected: dict[int, StoredOutcome] = {}
    times: list[float] = []
    measured = Sizes() if sizes is None else sizes
    for item in inputs:
        a, b = first[item.index], second.get(item.index)
        problem = _second_problem(a, b)
        if not problem and item.provenance != "traced" and _time(item, first, second) > slow_s:
            problem = DropReason.TOO_SLOW
        if not problem and measured.located(item.index, a):
            problem = DropReason.NAMES_BATCH_FOLDER
        if problem:
            (drops if item.provenance == "traced" else gen_drops)[problem] += 1
            if examples is not None and item.provenance == "traced":
                _note(examples, problem, a, b)
            continue
        assert b is not None
        times.append(max(float(a.get("t", 0.0)), float(b.get("t", 0.0))))
        stratum = "raises" if a.get("status") == "raised" else item.provenance
        kept.append(item.model_copy(update={"stratum": stratum, "call": render_call(target, a)}))
        expected[item.index] = strip_inputs(a)
    over = _over_budget({index: measured.of(index, first[index]) for index in expected})
    slow = _over_time({i.index: _time(i, first, second) for i in kept if i.index not in over})
    large, late = DropReason.TOO_LARGE_FOR_TASK, DropReason.TOO_SLOW_FOR_TASK
    for item in kept:
        reason = large if item.index in over else late if item.index in slow else None
        if reason:
            (drops if item.provenance == "traced" else gen_drops)[reason] += 1
    over |= slow
    times = [t for item, t in zip(kept, times, strict=True) if item.index not in over]
    kept = [item for item in kept if item.index not in over]
    return kept, {i: o for i, o in expected.items() if i not in over}, times


def _over_budget(sizes: Mapping[int, int]) -> set[int]:
    """The inputs to drop, largest expected outcome first (`sizes`: each one's JSON size), so
    the rest fit `TASK_EXPECTED_BYTES`."""
    return _largest_first(sizes, TASK_EXPECTED_BYTES)


def _over_time(times: Mapping[int, float]) -> set[int]:
    """The inputs to drop, slowest first and only those slower than `SLOW_INPUT_S`, so the rest
    take at most `TASK_CALL_S` in all (or as close to it as the quicker inputs allow)."""
    return _largest_first(times, TASK_CALL_S, above=SLOW_INPUT_S)


def _largest_first(amounts: Mapping[int, float], budget: float, above: float = 0.0) -> set[int]:
    """The indices to drop, largest amount first (ties by index) and only amounts over
    `above`, until the rest add up to at most `budget`."""
    total, over = sum(amounts.values()), set()
    for index in sorted(amounts, key=lambda i: (-amounts[i], i)):
        if total <= budget or amounts[index] <= above:
            break
        total -= amounts[index]
        over.add(index)
    return over
