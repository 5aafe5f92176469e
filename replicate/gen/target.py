"""Minting one task from one target: golden outputs, examples, validation (docs/design.md §2).

Hidden inputs per task, by rule:
- at least `MIN_TRACED` (3) inputs recorded from the repository's tests, else the task is dropped
  — unless the strength check runs and the tests' one or two calls widen into at least
  `MIN_SPARSE_GENERATED` (20) generated inputs the reference answers deterministically (half of
  them may run on a built `self`, `SPARSE_SELF_SHARE`, against a quarter otherwise): such a
  task is kept only when those inputs kill at least `MIN_SPARSE_MUTANTS` (3) mutants' worth at the
  same kill-rate floor as any other task (its few traced inputs fold into the widened stratum, so
  no traced stratum is claimed that the tests did not give);
- when at least `MIN_GENERATED` (5) distinct inputs can be generated (a traced call has an
  argument holding a plain value to vary), at least 5 generated inputs (widened or edge, whatever
  the reference does on them) must survive the golden runs, else the task is dropped: its hidden
  inputs would not reach beyond what the tests show;
- every stratum that counts on its own holds at least `MIN_STRATUM` (3) inputs: a smaller one is
  folded into the nearest stratum present (traced <-> widened <-> edge; a raising input into the
  stratum it came from), so no one or two inputs carry a stratum's whole weight.
Validation: the reference scores 1.0 when graded like a candidate (hash seed 0; a few inputs on
which it does not, at most `MAX_FLAKY`, are dropped as nondeterministic), and no degenerate
program, a table of the visible calls included, reaches the floor of its kind
(`replicate.gen.baseline.too_weak`; before dropping the task, inputs that tell them apart are
searched and added: `replicate.gen.separate`); their best raw reward is the baseline the reward
is normalised against, and no degenerate program earns more than 0.05 once normalised
(`replicate.gen.baseline.overpaid`).
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from replicate import GRADER_VERSION
from replicate.batch import LoadedTask, RepoSnapshot
from replicate.core import (
    Baseline,
    CallInput,
    DropReason,
    Example,
    HiddenTask,
    Language,
    RepoRecord,
    Source,
    Stratum,
    Strength,
    Target,
    TaskSpec,
    Validation,
    checked_reason,
    render_prompt,
    task_id,
)
from replicate.gen.baseline import (
    baseline,
    overpaid,
    reaching_floor,
    same_as_original,
    too_weak,
    weak_detail,
)
from replicate.gen.golden import Golden, golden
from replicate.gen.mutants import FEW
from replicate.gen.separate import separating
from replicate.gen.settings import timing_settings
from replicate.gen.strength import assess, rejected, with_added
from replicate.gen.survivors import joined
from replicate.gen.target_detail import drops_detail, strength_detail
from replicate.grading import Refusal, matches, original_source, run_spliced
from replicate.harvest import HarvestedCall
from replicate.inputs import Budget, recipe_b64
from replicate.jail import Jail
from replicate.values import render_outcome

MIN_TRACED = 3
MIN_GENERATED = 5
MIN_STRATUM = 3
MIN_SPARSE_GENERATED = 20  # generated inputs standing in for the traced calls the tests lack
MIN_SPARSE_MUTANTS = FEW  # mutants graded on a sparse task, so its kill rate says something
# Of a sparse task's generated inputs, at most this share on a `self` built from a class call
# (a task of a method that takes only `self` could otherwise never reach its 20).
SPARSE_SELF_SHARE = 0.5
SEARCH_ROUNDS = 2  # a round's inputs may lift a program under the floor to it: one more then
EXAMPLES_FROM = 6  # hold out examples for TASK.md only when at least this many traced survive
EXAMPLES = 2
MAX_FLAKY = 0.1  # hidden inputs the reference may fail under the grading seed (they are dropped)
BUDGET = Budget()


@dataclass(frozen=True)
class Minted:
    task: LoadedTask


@dataclass(frozen=True)
class Dropped:
    stage: str
    reason: str  # a `DropReason`'s text: the funnel table groups by it
    detail: str = ""  # what happened to this target, in words

    def __post_init__(self) -> None:
        checked_reason(self.reason)  # a text of no member is a bug here, not the target's


def _examples(g: Golden) -> tuple[tuple[Example, ...], tuple[CallInput, ...]]:
    """Hold a few short, returning traced calls out of the hidden inputs to show in TASK.md."""
    traced = [i for i in g.inputs if i.provenance == "traced"]
    if len(traced) < EXAMPLES_FROM:
        return (), g.inputs
    shown = [i for i in traced if g.expected[i.index].get("status") == "returned"]
    shown = sorted(shown, key=lambda i: len(i.call) + len(render_outcome(g.expected[i.index])))
    chosen = {i.index for i in shown[:EXAMPLES] if len(i.call) <= 160}
    examples = tuple(
        Example(call=i.call, outcome=render_outcome(g.expected[i.index]))
        for i in g.inputs
        if i.index in chosen
    )
    return examples, tuple(i for i in g.inputs if i.index not in chosen)


# Where a small stratum's inputs go: the nearest stratum present (a raising input first to the
# stratum of where it came from).
_NEAREST: dict[str, tuple[Stratum, ...]] = {
    "traced": ("widened", "edge", "raises"),
    "widened": ("traced", "edge", "raises"),
    "edge": ("widened", "traced", "raises"),
    "raises": ("traced", "widened", "edge"),
}


def settle_strata(inputs: Sequence[CallInput], sparse: bool = False) -> tuple[CallInput, ...]:
    """Fold each stratum smaller than `MIN_STRATUM` (the smallest first) into its nearest.
    `sparse` (fewer than `MIN_TRACED` traced inputs): those join the widened stratum first, so
    that no small stratum folds into a traced one the tests did not give."""
    out = [_widened(i) if sparse and i.stratum == "traced" else i for i in inputs]
    while True:
        sizes: Counter[str] = Counter(i.stratum for i in out)
        small = sorted((n, name) for name, n in sizes.items() if n < MIN_STRATUM)
        if not small or len(sizes) < 2:
            return tuple(out)
        fold = small[0][1]
        out = [_fold(i, sizes) if i.stratum == fold else i for i in out]


def _widened(item: CallInput) -> CallInput:
    return item.model_copy(update={"stratum": "widened"})


def _fold(item: CallInput, sizes: Counter[str]) -> CallInput:
    first: tuple[Stratum, ...] = (item.provenance,) if item.stratum == "raises" else ()
    into = next(s for s in (*first, *_NEAREST[item.stratum]) if s != item.stratum and sizes[s])
    return item.model_copy(update={"stratum": into})


def _task(
    repo: RepoSnapshot,
    repo_dir: str,
    target: Target,
    g: Golden,
    validation: Validation,
    reference_baseline: Baseline | None = None,
    strength: Strength | None = None,
) -> LoadedTask:
    record = repo.record
    ident = task_id(record.key, record.commit, target.symbol)
    examples, hidden_inputs = _examples(g)
    hidden_inputs = settle_strata(hidden_inputs, is_sparse(g))
    spec = task_spec(ident, record, target, examples, len(hidden_inputs))
    source = spec.source
    hidden = HiddenTask(
        id=ident,
        repo_dir=repo_dir,
        source=source,
        target=target,
        grading=timing_settings(g.max_call_s, g.total_call_s),
        validation=validation,
        grader_version=GRADER_VERSION,
        baseline=reference_baseline,
        strength=strength,
    )
    expected = {i.index: g.expected[i.index] for i in hidden_inputs}
    prompt = render_prompt(target, examples, len(hidden_inputs))
    return LoadedTask(
        spec=spec, hidden=hidden, inputs=hidden_inputs, expected=expected, prompt=prompt, repo=repo
    )


def task_spec(
    ident: str,
    record: RepoRecord,
    target: Target,
    examples: tuple[Example, ...],
    hidden_inputs: int,
    language: Language = "python",
) -> TaskSpec:
    """The public spec of task `ident` on `target` of the repository `record`."""
    source = Source(repo=record.key, commit=record.commit, path=target.path, symbol=target.symbol)
    return TaskSpec(
        id=ident,
        language=language,
        source=source,
        kind=target.kind,
        signature=target.signature,
        docstring=target.docstring,
        examples=examples,
        hidden_inputs=hidden_inputs,
        body_statements=target.body_statements,
    )


def _too_few(g: Golden, recorded: int, sparse: bool = False) -> Dropped | None:
    """Why `g` holds too few inputs for a task, if it does; `recorded`: the traced calls the
    harvest recorded (too few of those is the tests' doing, not nondeterminism).  `sparse`:
    fewer than `MIN_TRACED` traced inputs may stand when at least `MIN_SPARSE_GENERATED`
    generated ones survive (the caller then holds the task to the strength floor)."""
    traced = sum(1 for i in g.inputs if i.provenance == "traced")
    generated = len(g.inputs) - traced
    if traced < MIN_TRACED + (EXAMPLES if traced >= EXAMPLES_FROM else 0):
        if sparse and is_sparse(g) and generated >= MIN_SPARSE_GENERATED:
            return None
        return _too_few_traced(g, recorded, traced, generated if sparse and traced else None)
    if g.generated >= MIN_GENERATED and generated < MIN_GENERATED:
        detail = drops_detail(g.generated_drops, {}, g.generated, "generated inputs", generated)
        reason = f"{DropReason.TOO_FEW_GENERATED}{_most(g.generated_drops)}"
        return Dropped("deterministic", reason, detail)
    return None


def _too_few_traced(g: Golden, recorded: int, traced: int, generated: int | None) -> Dropped:
    """`generated`: the generated inputs that survived, when they could have stood in."""
    stand_in = (
        f"{generated} generated inputs survive ({MIN_SPARSE_GENERATED} stand in for too few "
        "traced calls)"
        if generated is not None
        else ""
    )
    if recorded < MIN_TRACED:
        return Dropped("deterministic", DropReason.TOO_FEW_TRACED, stand_in)
    detail = drops_detail(g.drops, g.examples, recorded, "traced inputs", traced)
    detail = "; ".join(d for d in (detail, stand_in) if d)
    return Dropped("deterministic", f"{DropReason.TOO_FEW_DETERMINISTIC}{_most(g.drops)}", detail)


def is_sparse(g: Golden) -> bool:
    """Whether `g` has some, but fewer than `MIN_TRACED`, traced inputs."""
    return 0 < sum(1 for i in g.inputs if i.provenance == "traced") < MIN_TRACED


def _unvouched(g: Golden, strength: Strength) -> Dropped | None:
    """A sparse task whose generated inputs the mutants could not test, or did not pass."""
    if not is_sparse(g):
        return None
    weak = rejected(strength)
    if weak or strength.mutants < MIN_SPARSE_MUTANTS:
        why = weak or f"fewer than {MIN_SPARSE_MUTANTS} mutants to test them"
        reason = f"{DropReason.SPARSE_UNVOUCHED}: {why}"
        return Dropped("validated", reason, strength_detail(strength))
    return None


def _most(drops: Counter[str]) -> str:
    """The reason that cost the most inputs, as " (most dropped: <reason>)", if any did."""
    top = drops.most_common(1)
    return f" (most dropped: {top[0][0]})" if top else ""


def traced_input(index: int, call: HarvestedCall) -> CallInput:
    """A traced call as a hidden input; one whose `self`'s class call was recorded is a recipe
    carrying that call, so the widening can vary `self` (`replicate.inputs.recipes`)."""
    blob = call.pickle_b64
    if call.ctor_b64:
        ctor = base64.b64decode(call.ctor_b64)
        blob = recipe_b64(base64.b64decode(call.pickle_b64), {}, ctor)
    return CallInput(index=index, origin=call.origin, pickle_b64=blob, visible=call.visible)


def mint_target(
    jail: Jail,
    repo: RepoSnapshot,
    repo_dir: str,
    target: Target,
    calls: Sequence[HarvestedCall],
    budget: Budget | None = BUDGET,
    min_kill_rate: float | None = None,
    ctors: Sequence[str] = (),
) -> Minted | Dropped:
    """Mint one task; with `min_kill_rate` (None: no strength check) its mutants are graded,
    inputs that kill survivors are added, and a task below the rate is dropped.  `ctors`: the
    recorded class calls (pickled, base64) of a method's class, to build other `self`s from."""
    inputs = [traced_input(n, call) for n, call in enumerate(calls)]
    others = [base64.b64decode(c) for c in ctors] if target.kind == "method" else []
    sparse = min_kill_rate is not None
    if budget is not None and sparse and len(calls) < MIN_TRACED:
        budget = dataclasses.replace(budget, self_share=SPARSE_SELF_SHARE)
    g = golden(jail, target, inputs, budget, others)
    if g.infra:  # "reference does not import: <the error>", "runner did not start...: ..."
        reason, _, why = g.infra.partition(": ")
        return Dropped("encodable", reason, why)
    if g.encodable == 0:
        detail = drops_detail(g.drops, g.examples, len(calls), "traced inputs", 0)
        return Dropped("encodable", _top(g) or DropReason.NO_INPUT_SURVIVES, detail)
    short = _too_few(g, len(calls), sparse)
    if short:
        return short
    pending = Validation(reference_reward=-1.0, stub_reward=-1.0)
    task = _task(repo, repo_dir, target, g, pending)
    started = time.monotonic()
    flaky = _reference_misses(task, jail)
    reference_s = time.monotonic() - started  # the mutants' time limit scales with it
    if isinstance(flaky, Dropped):
        return flaky
    if flaky:  # outcomes that differ under the grading hash seed: nondeterministic after all
        g = _without(g, flaky)
        short = _too_few(g, len(calls), sparse)
        if short:
            return short
        task = _task(repo, repo_dir, target, g, pending)
    strength: Strength | None = None
    if min_kill_rate is not None:
        assessed = assess(
            task, jail, threshold=min_kill_rate, reference_s=reference_s, slowest_s=g.max_call_s
        )
        if isinstance(assessed, str):
            return Dropped("validated", assessed)
        unvouched = _unvouched(g, assessed.strength)
        if unvouched:
            return unvouched
        weak = rejected(assessed.strength)
        if weak:
            return Dropped("validated", weak, strength_detail(assessed.strength))
        strength = assessed.strength
        g = with_added(g, assessed)
        task = _task(repo, repo_dir, target, g, pending)
    rebuild = functools.partial(_task, repo, repo_dir, target, validation=pending)
    floored = _under_the_floor(task, g, rebuild, jail)
    if isinstance(floored, Dropped):
        return floored
    g, found = floored
    validation = Validation(
        reference_reward=1.0,
        stub_reward=0.0,
        dropped_nondeterministic=g.drops.get(DropReason.NONDETERMINISTIC, 0),
    )
    return Minted(_task(repo, repo_dir, target, g, validation, found, strength))


def _under_the_floor(
    task: LoadedTask,
    g: Golden,
    rebuild: Callable[[Golden], LoadedTask],
    jail: Jail,
) -> tuple[Golden, Baseline] | Dropped:
    """The baseline, with the golden outputs it was computed on; when a degenerate program (a
    table of the visible calls included) reaches its floor, inputs that tell it apart are
    searched and added first (`replicate.gen.separate`; `rebuild` makes the task of golden
    outputs), and the reference graded on all the task's inputs together, as a candidate is (a
    searched input checked alone may meet what another input of the same run left behind).
    Dropped when the reference misses any, when the baseline stays at the floor, when a
    degenerate program would earn more than `MAX_DEGENERATE_REWARD` normalised, or when one
    matches the original on every input (`DropReason.DEGENERATE_ORIGINAL`: it is one)."""
    found = baseline(task, jail)
    if isinstance(found, str):
        return Dropped("validated", found)
    searched = 0
    for round_ in range(SEARCH_ROUNDS):
        if not too_weak(found):
            break
        same = same_as_original(task, found, searched=round_ > 0)
        if same:  # no input tells them apart (or no search could find one)
            return Dropped("validated", DropReason.DEGENERATE_ORIGINAL, same)
        extra = separating(task, found, jail, round_)
        if isinstance(extra, str):
            return Dropped("validated", extra)
        if not extra.added:
            break
        searched += len(extra.added)
        g = joined(g, extra.added, extra.expected, extra.times)
        task = rebuild(g)
        missed = _reference_misses(task, jail)  # run together, as a grade runs them
        if missed:
            count = len(missed) if isinstance(missed, set) else "some"
            detail = f"the reference misses {count} of {len(task.inputs)} inputs"
            return Dropped("validated", DropReason.SEARCHED_MISS, detail + separated(searched))
        found = baseline(task, jail)
        if isinstance(found, str):
            return Dropped("validated", found)
    if too_weak(found):
        same = same_as_original(task, found, searched=True)
        if same:
            return Dropped("validated", DropReason.DEGENERATE_ORIGINAL, same)
    why = too_weak(found) or overpaid(found)
    if why:
        tried = separated(searched) if reaching_floor(found) or searched else ""
        return Dropped("validated", why, weak_detail(found) + tried)
    return g, found


def separated(added: int) -> str:
    """What the search for inputs that tell a weak task from its degenerate programs found."""
    if not added:
        return "; no searched input tells it apart"
    return f"; {added} searched inputs that tell it apart added"


def _reference_misses(task: LoadedTask, jail: Jail) -> set[int] | Dropped:
    """The hidden inputs the reference itself fails when graded as a candidate is (hash seed
    0), or why the task cannot stand: it cannot be graded, or it fails more than a few.  The
    original file goes in as it is: spliced as a candidate it is a whole file, which splices as
    itself (parsing it and the stubbed file again cost more-itertools ~0.1 s per target)."""
    found = run_spliced(task, original_source(task), jail)  # a whole file splices as itself
    if isinstance(found, Refusal):
        why = f"graded as a candidate it scores {found.reward}: {found.reason}"
        return Dropped("validated", DropReason.REFERENCE_NOT_GRADABLE, why)
    settings = task.hidden.grading
    missed = matches(task.inputs, task.expected, found.run.parsed.outcomes, settings)
    flaky = {item.index for item, miss in zip(task.inputs, missed, strict=True) if miss}
    if len(flaky) > MAX_FLAKY * len(task.inputs):
        why = (
            f"{len(flaky)} of {len(task.inputs)} hidden inputs differ under the grading hash "
            f"seed (at most {MAX_FLAKY:.0%} may)"
        )
        return Dropped("validated", DropReason.REFERENCE_FAILS_HIDDEN, why)
    return flaky


def _without(g: Golden, flaky: set[int]) -> Golden:
    drops = Counter(g.drops)
    drops[DropReason.NONDETERMINISTIC] += len(flaky)
    kept = tuple(i for i in g.inputs if i.index not in flaky)
    return dataclasses.replace(g, inputs=kept, drops=drops)


def _top(g: Golden) -> str | None:
    common = g.drops.most_common(1)
    return common[0][0] if common else None
