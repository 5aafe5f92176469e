"""`replicate gen` on a JavaScript/TypeScript repository: its test files run in the jail under the
recorder (`jail.node_harvest`), each target's recorded calls kept where they replay to the same
outcome on the original under another `Math.random` seed and a shifted clock (`stable`, the
determinism gate), the stub's matches taken out, and the task written through the same
`Publisher`, ledger and funnel as a Python target's.

A task's hidden inputs are its stable recorded calls (the traced stratum) and calls widened from
them with fast-check (`jail.node_widening`; the widened stratum, or raises), each widened one
kept only where the original gives it one outcome under `GOLDEN_RUNS` too. With a
`min_kill_rate`, its mutants are run on them (`gen.javascript_strength`) and a task under the
floor dropped, as a Python task is (its survivors hunted first). Its degenerate programs and
tables of the visible calls are graded (`gen.javascript_baseline`): their best raw reward is the
task's baseline, and a task one of them earns too much on is dropped, as a Python task is, once
a search for inputs that tell them apart found too few (`gen.javascript_separate`). The tests
run as plain Node scripts (`node <file>`): a `node:test`, tape, node-tap or uvu file, or one
that asserts at its top level; a mocha file through mocha's own entry when the repository's
installed dependencies (`jail.node_deps`) hold it; a jest, vitest or ava file as a script with
that runner's API preloaded (`PRELOADS`: jest and vitest run a file where the recorder cannot
reach, ava refuses to load outside its workers); another runner's (karma, ...) as a plain
script, which the funnel's notes say.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import cast

from replicate import GRADER_VERSION
from replicate.batch import LoadedTask, RepoSnapshot
from replicate.core import (
    CallInput,
    DropReason,
    Example,
    GradingSettings,
    HiddenTask,
    Language,
    LedgerEntry,
    Progress,
    Target,
    Validation,
    render_prompt,
    task_id,
)
from replicate.gen import javascript_separate
from replicate.gen.funnel import STAGES
from replicate.gen.javascript_drawn import GOLDEN_RUNS, drawn_stable, hidden_input, with_inputs
from replicate.gen.javascript_strength import Measured, measure
from replicate.gen.publish import Publisher
from replicate.gen.strength import rejected
from replicate.gen.target import (
    EXAMPLES,
    EXAMPLES_FROM,
    MIN_TRACED,
    Dropped,
    Minted,
    task_spec,
)
from replicate.gen.target_detail import strength_detail
from replicate.grading import DEFAULT_WEIGHTS
from replicate.grading import javascript as graded
from replicate.jail import (
    Sandbox,
    node,
    node_harvest,
    node_targets,
    node_tests,
    node_widening,
)
from replicate.values import javascript_text

# what the funnel notes of a runner whose files ran with its API preloaded (`node_tests.PRELOADS`)
PRELOAD_NOTES = {
    "jest": "jest's test files ran as Node scripts on node:test with jest's own expect and "
    "jest-mock (jest.mock, fake timers and snapshots are not given: a test that uses them fails)",
    "vitest": "vitest's test files ran as Node scripts, their `import from 'vitest'` given "
    "vitest's API on node:test with its own expect and spies (vi.mock, fake timers, snapshots "
    "and a CommonJS test file's require of vitest are not given: a test that uses them fails)",
    "ava": "ava's test files ran as Node scripts, their `ava` given ava's API on node:test and "
    "node:assert (t.snapshot and t.try are not given: a test that uses them fails)",
}
FILE_TIMEOUT_S = 120.0
SCRIPT_GRADING = GradingSettings(compare_exception_message=True, stratum_weights=DEFAULT_WEIGHTS)
# calls drawn by fast-check a target, before the gate
WIDENING = node_widening.Widening(count=40, seed=0)
STRENGTH_NOTE = (
    "strength unmeasured (--no-strength): no JavaScript task's mutants were run, its strength "
    "is recorded as none"
)


@dataclass(frozen=True)
class ScriptWork:
    """What minting a JavaScript repository's targets takes."""

    snapshot: RepoSnapshot
    repo_dir: str
    language: str
    test_runner: str
    sandbox: Sandbox
    limit: int | None = None
    min_kill_rate: float | None = None  # the strength floor; None: strength not measured
    widening: node_widening.Widening = WIDENING
    warm: bool = True  # mutants and degenerate programs in warm jails (off: `gen --cold`)


def mint_scripts(
    work: ScriptWork,
    targets: Mapping[str, Target],
    known: Mapping[str, LedgerEntry],
    publish: Publisher,
    show: Progress,
) -> tuple[str, ...]:
    """Mint every target (those `known` decided taken from the ledger); the funnel's notes."""
    tree = work.snapshot.tree
    reachable: dict[str, node.NodeTarget] = {}
    for symbol, target in sorted(targets.items()):
        if symbol in known:
            continue
        found = node_targets.node_target(target, (tree / target.path).read_bytes())
        if found is None:
            why = "neither a function declaration nor exported in a form read here"
            publish.dropped(symbol, STAGES[1], DropReason.NOT_REACHABLE, why)
        else:
            reachable[symbol] = found
    files = (
        node_tests.find_test_files(tree) if reachable else ()
    )  # none: every target decided already
    show.stage(f"running the repository's {len(files)} test files to record calls")
    harvest = node_harvest.record_tests(
        work.sandbox,
        tree,
        list(reachable.values()),
        files,
        command=node_tests.runner_command(tree, work.test_runner, files),
        settings=node.NodeSettings(timeout_s=FILE_TIMEOUT_S),
    )
    show.stage("replaying the recorded calls (another seed, a shifted clock)")
    kept = set(node_harvest.stable(work.sandbox, tree, harvest, GOLDEN_RUNS))
    show.stage("validating tasks", total=len(targets))
    for symbol in sorted(targets):
        show.advance()
        if symbol in known:
            publish.resume(known[symbol])
        elif work.limit is not None and len(publish.task_ids) >= work.limit:
            publish.skipped(DropReason.LIMIT_REACHED, 1)
        elif symbol in reachable:
            calls = [r for r in harvest.calls if r.target == reachable[symbol]]
            result = _mint_one(work, targets[symbol], calls, [r for r in calls if r in kept])
            if result is None:
                publish.dropped(symbol, STAGES[1], *_not_called(harvest))
            else:
                publish.outcome(symbol, result)
    return _notes(work, harvest, files)


def _not_called(harvest: node_harvest.Harvest) -> tuple[DropReason, str]:
    if all(f.exit_code != 0 and not f.recorded for f in harvest.files):
        return DropReason.TESTS_DID_NOT_START, "no test file ran under node"
    return DropReason.NOT_CALLED, ""


def _notes(
    work: ScriptWork, harvest: node_harvest.Harvest, files: Sequence[str]
) -> tuple[str, ...]:
    notes = [STRENGTH_NOTE] if work.min_kill_rate is None else []
    command = node_tests.runner_command(work.snapshot.tree, work.test_runner)
    if work.test_runner not in node_tests.PLAIN_RUNNERS and not command.script:
        notes.append(
            f"the tests are declared for {work.test_runner}, not supported yet: each test file "
            "ran as a plain Node script"
        )
    if work.test_runner in PRELOAD_NOTES and command.script:
        notes.append(PRELOAD_NOTES[work.test_runner])
    failed = [f.test_file for f in harvest.files if f.exit_code != 0]
    if failed:
        notes.append(f"{len(failed)} of {len(files)} test files failed under node: {failed[0]}")
    return tuple(notes)


def _mint_one(
    work: ScriptWork,
    target: Target,
    recorded: Sequence[node_harvest.Recorded],
    stable: Sequence[node_harvest.Recorded],
) -> Minted | Dropped | None:
    """One target's task from its recorded and stable calls; None when the tests made none."""
    if not recorded:
        return None
    if len(recorded) < MIN_TRACED:
        return Dropped(STAGES[3], DropReason.TOO_FEW_TRACED, f"{len(recorded)} recorded")
    if len(stable) < MIN_TRACED:
        detail = f"{len(recorded) - len(stable)} of {len(recorded)} replayed to another outcome"
        return Dropped(STAGES[3], DropReason.TOO_FEW_DETERMINISTIC, detail)
    inputs = widen(work, target, stable)
    task = _task(work, target, inputs, len(recorded) - len(stable))
    stubbed = graded.run_script(task, work.sandbox, task.stubbed_source())
    matched = {
        item.index
        for item, got in zip(task.inputs, stubbed, strict=True)
        if graded.compare_node(node.read_outcome(task.expected[item.index]), got) is None
    }
    if matched:  # inputs the stub's throw matches test nothing of the body
        fewer = _without(task, matched, work.language)
        if fewer is None:
            detail = f"on {len(matched)} of {len(task.inputs)} inputs"
            return Dropped(STAGES[4], DropReason.STUB_EARNS, detail)
        task = fewer
    started = time.monotonic()
    reference = graded.score_script(task, graded.run_script(task, work.sandbox, None))
    reference_s = time.monotonic() - started  # the mutants' time limit scales with it
    if reference.reward < 1.0:
        where = reference.counterexample.call if reference.counterexample else ""
        return Dropped(STAGES[4], DropReason.REFERENCE_FAILS_HIDDEN, where)
    assessed = strength(work, task, reference_s)
    measured = assessed.strength if assessed is not None else None
    weak = rejected(measured) if measured is not None else None
    if weak and measured is not None:
        return Dropped(STAGES[4], weak, strength_detail(measured))
    if assessed is not None and assessed.added:
        task = with_inputs(task, assessed.added, work.language)
    floored = javascript_separate.under_the_floor(task, work.sandbox, work.language, work.warm)
    if isinstance(floored, Dropped):  # after strength, as Python's
        return floored
    task, found = floored
    hidden = task.hidden.model_copy(update={"strength": measured, "baseline": found})
    return Minted(replace(task, hidden=hidden))


def widen(
    work: ScriptWork, target: Target, stable: Sequence[node_harvest.Recorded]
) -> tuple[tuple[CallInput, node.NodeOutcome], ...]:
    """A target's hidden inputs and their golden outcomes: the stable recorded calls (traced),
    then calls fast-check draws from them (`work.widening`) where the original gives each one
    outcome (`javascript_drawn.drawn_stable`: the determinism gate)."""
    traced = [(hidden_input(i, r, target), r.outcome) for i, r in enumerate(stable)]
    if not stable:
        return tuple(traced)
    samples = [r.call for r in stable]
    kept = drawn_stable(work.sandbox, work.snapshot.tree, stable[0].target, samples, work.widening)
    widened = [
        (hidden_input(len(traced) + n, r, target, generated=True), r.outcome)
        for n, r in enumerate(kept)
    ]
    return tuple(traced + widened)


def strength(work: ScriptWork, task: LoadedTask, reference_s: float) -> Measured | None:
    """The task's kill rate against its mutants, with the searched inputs that kill survivors
    (`javascript_strength.measure`), held to `work.min_kill_rate`; None (recorded as unmeasured)
    when no floor was asked for, as a Python task's strength is only measured with one."""
    if work.min_kill_rate is None:
        return None
    return measure(task, work.sandbox, work.min_kill_rate, reference_s, warm=work.warm)


def _task(
    work: ScriptWork,
    target: Target,
    inputs: Sequence[tuple[CallInput, node.NodeOutcome]],
    nondeterministic: int,
) -> LoadedTask:
    record = work.snapshot.record
    ident = task_id(record.key, record.commit, target.symbol)
    expected = {item.index: node.outcome_json(outcome) for item, outcome in inputs}
    examples, hidden_inputs = _examples(inputs)
    language = cast("Language", work.language)  # "javascript" or "typescript"
    spec = task_spec(ident, record, target, examples, len(hidden_inputs), language)
    source = spec.source
    validation = Validation(
        reference_reward=1.0, stub_reward=0.0, dropped_nondeterministic=nondeterministic
    )
    hidden = HiddenTask(
        id=ident,
        repo_dir=work.repo_dir,
        source=source,
        target=target,
        grading=SCRIPT_GRADING,
        validation=validation,
        grader_version=GRADER_VERSION,
    )
    prompt = render_prompt(target, examples, len(hidden_inputs), work.language)
    return LoadedTask(
        spec=spec,
        hidden=hidden,
        inputs=hidden_inputs,
        expected={i.index: expected[i.index] for i in hidden_inputs},
        prompt=prompt,
        repo=work.snapshot,
    )


def _examples(
    inputs: Sequence[tuple[CallInput, node.NodeOutcome]],
) -> tuple[tuple[Example, ...], tuple[CallInput, ...]]:
    """A few short returning recorded calls held out of the hidden inputs for TASK.md, when
    enough."""
    if len(inputs) < EXAMPLES_FROM:
        return (), tuple(item for item, _ in inputs)
    shown = [
        (
            len(item.call) + len(javascript_text.render(o.value)),
            item.index,
            Example(call=item.call, outcome=javascript_text.render(o.value)),
        )
        for item, o in inputs
        if o.status is node.Status.RETURNED
        and o.value is not None
        and len(item.call) <= 160
        and item.provenance == "traced"
    ]
    chosen = {index: example for _, index, example in sorted(shown)[:EXAMPLES]}
    examples = tuple(chosen[i.index] for i, _ in inputs if i.index in chosen)
    return examples, tuple(item for item, _ in inputs if item.index not in chosen)


def _without(task: LoadedTask, dropped: set[int], language: str) -> LoadedTask | None:
    """The task less the `dropped` inputs; None when fewer than `MIN_TRACED` are left."""
    kept = tuple(item for item in task.inputs if item.index not in dropped)
    if len(kept) < MIN_TRACED:
        return None
    spec = task.spec.model_copy(update={"hidden_inputs": len(kept)})
    prompt = render_prompt(task.hidden.target, spec.examples, len(kept), language)
    expected = {i.index: task.expected[i.index] for i in kept}
    return replace(task, spec=spec, inputs=kept, expected=expected, prompt=prompt)
