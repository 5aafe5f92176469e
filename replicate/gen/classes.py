"""Minting class tasks (task kind `class`) from the method tasks a gen minted.

A class task hides every method of one class at once (`languages/python_classes.py`).  Until
call sequences grade it, its hidden inputs are its methods' own, taken from the method tasks of
the same gen: each one's recorded and widened inputs with the `self` the tests had, already
agreed by two runs of the reference, with their golden outcomes (`CallInput.member` says whose).
So are its guarantees:
- baseline: a degenerate class may pick, per method, the degenerate program that does best on
  it; the grade is the mean over methods (`grading/classes.py`), so such a class earns the mean
  of the methods' baselines.  Each family of degenerate classes is graded too, on its own and
  behind a table of the visible calls (`gen/class_families.py`: every method returning None,
  raising, returning self, returning its first argument; its methods then call each other's
  degenerate bodies, which no method task saw), each graded as a candidate is, on the
  members' inputs and the call sequences: the baseline is the best of them all, and a class on
  which a family or its table earns `MAX_BASELINE` is dropped, the family named;
- strength: a mutant of one method changes the file as the method task's mutant did, and runs
  on the same inputs: the class's mutants are its methods', killed as they were, at the same
  kill-rate floor each method task was held to;
- validation: the reference class, spliced into the stubbed file, earns 1.0 and the stub 0.0,
  graded as a candidate is (each member's inputs, a run a member), else the class is dropped.
A class needs at least `MIN_GRADED_MEMBERS` methods minted as method tasks.

Call sequences: the sequences the tests made on the class's instances (recorded by the same
harvest, within `GEN_SEQUENCES`) and widened ones drawn from them (`CLASS_WIDENING`), each kept when
the reference replays it alike twice (`gen/sequences.py:class_sequences`), are stored with the
task (`sequences.jsonl`) and graded beside the members' inputs (`grading/class_sequences.py`);
the validation above grades them too.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from replicate import GRADER_VERSION
from replicate.batch import LoadedTask, RepoSnapshot, TaskFiles, read_task_files
from replicate.core import (
    Baseline,
    CallInput,
    CallSequence,
    ClassRef,
    DegenerateScore,
    DropReason,
    Example,
    HiddenSequence,
    HiddenTask,
    LedgerEntry,
    Source,
    Strength,
    Target,
    TaskKind,
    TaskSpec,
    Validation,
    render_class_prompt,
    render_module_prompt,
    task_id,
)
from replicate.gen.baseline import reaching_floor
from replicate.gen.class_families import FamilyRunFailed, class_baseline
from replicate.gen.publish import Publisher
from replicate.gen.sequences import class_sequences
from replicate.gen.target import Dropped, Minted
from replicate.grading import MAX_BASELINE, grade_text, original_source, stubbed_source
from replicate.harvest import SequenceBudget
from replicate.jail import Jail

MIN_GRADED_MEMBERS = 2
TOO_FEW_MEMBERS = DropReason.CLASS_TOO_FEW_MEMBERS.says(MIN_GRADED_MEMBERS)
REFERENCE_MISSES = DropReason.REFERENCE_CLASS_MISSES.value
STUB_EARNS = DropReason.STUB_CLASS_EARNS.value
GEN_SEQUENCES = SequenceBudget(max_steps=40, max_sequences=40)  # recorded, per class
NOT_RUN = DropReason.DEGENERATE_CLASS_NOT_RUN.value
EACH_METHOD = "class: each method's best degenerate program"  # their mean (`_baseline`)


@dataclass(frozen=True)
class ClassWork:
    """What minting a class task needs: the batch, the repository, a jail to validate in, and
    the call sequences the harvest recorded per class (`ClassRef.key`)."""

    out: Path
    repo: RepoSnapshot
    repo_dir: str
    jail: Jail
    sequences: Mapping[str, tuple[CallSequence, ...]] = field(default_factory=dict)


def class_refs(classes: Iterable[Target]) -> dict[str, ClassRef]:
    """The classes whose call sequences the harvest records, by key."""
    refs = (ClassRef(path=c.path, module=c.module, qualname=c.qualname) for c in classes)
    return {ref.key: ref for ref in refs}


def mint_classes(
    classes: Sequence[Target],
    method_ids: Iterable[str],
    known: Mapping[str, LedgerEntry],
    publish: Publisher,
    work: ClassWork,
    workers: int = 1,
) -> None:
    """Mint (or resume from the ledger) a class task for each of `classes`, from the method
    tasks `method_ids` of this gen, `workers` at once; each published as a target is, in order."""
    by_class = _method_tasks(work, method_ids)

    def one(target: Target) -> Minted | Dropped:
        return mint_class(target, by_class.get((target.module, target.qualname), []), work)

    mint_each(classes, one, known, publish, workers)


def mint_each(
    targets: Sequence[Target],
    mint_one: Callable[[Target], Minted | Dropped],
    known: Mapping[str, LedgerEntry],
    publish: Publisher,
    workers: int = 1,
) -> None:
    """`mint_one` of each of `targets` not in the ledger (`known`: resumed), `workers` at once,
    each outcome published in order."""
    publish.counter.keep("extracted", len(targets))
    todo = []
    for target in targets:
        entry = known.get(target.symbol)
        if entry is not None:
            publish.resume(entry)
        else:
            todo.append(target)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for target, result in zip(todo, pool.map(mint_one, todo), strict=True):
            publish.outcome(target.symbol, result)


def _method_tasks(work: ClassWork, ids: Iterable[str]) -> dict[tuple[str, str], list[TaskFiles]]:
    """This repository's method tasks among `ids`, by their class (module, qualname)."""
    record = work.repo.record
    found: dict[tuple[str, str], list[TaskFiles]] = {}
    for ident in ids:
        files = read_task_files(work.out, ident)
        target = files.hidden.target
        source = files.hidden.source
        if (source.repo, source.commit) != (record.key, record.commit):
            continue
        if target.kind != "class" and target.class_name:
            found.setdefault((target.module, target.class_name), []).append(files)
    return found


def mint_class(target: Target, methods: Sequence[TaskFiles], work: ClassWork) -> Minted | Dropped:
    """The class task of `target` from its methods' tasks, validated; or why not."""
    names = dict.fromkeys(member.qualname for member in target.members)
    by_name = {files.hidden.target.qualname: files for files in methods}
    ordered = [by_name[name] for name in names if name in by_name]
    if len(ordered) < MIN_GRADED_MEMBERS:
        detail = f"{len(ordered)} of its {len(names)} methods minted as method tasks"
        return Dropped("traced", TOO_FEW_MEMBERS, detail)
    task = assemble(target, ordered, work.repo, work.repo_dir)
    sequences = _sequences(target, task, work)
    task = assemble(target, ordered, work.repo, work.repo_dir, sequences)
    return validated(task, work.jail, CLASS_CHECKS)


@dataclass(frozen=True)
class Checks:
    """What a task of many members (a class, a module) is dropped for at its validation, and
    its degenerate programs' raw rewards (`FamilyRunFailed` when one could not run)."""

    reference_misses: str
    stub_earns: str
    at_floor: DropReason  # a degenerate program at the floor: (its name, the floor)
    degenerate: Callable[[LoadedTask, Jail], Baseline]


CLASS_CHECKS = Checks(
    REFERENCE_MISSES, STUB_EARNS, DropReason.DEGENERATE_CLASS_AT_FLOOR, class_baseline
)


def validated(task: LoadedTask, jail: Jail, checks: Checks) -> Minted | Dropped:
    """`task` (assembled from its members' tasks) once the reference earns 1.0, the stub 0.0 and
    every degenerate program of `checks` under `MAX_BASELINE`, the best of them and of its
    members' mean in its baseline; else why it is dropped."""
    reference = grade_text(task, original_source(task).decode("utf-8"), jail, shrink=False)
    if reference.reward != 1.0:
        return Dropped("validated", checks.reference_misses, reference.reason)
    stub = grade_text(task, stubbed_source(task).decode("utf-8"), jail, shrink=False)
    if stub.reward != 0.0:
        return Dropped("validated", checks.stub_earns, f"{stub.reward}: {stub.reason}")
    try:
        families = checks.degenerate(task, jail)
    except FamilyRunFailed as exc:
        return Dropped("validated", NOT_RUN, str(exc))
    weak = reaching_floor(families)
    if weak:
        reason = checks.at_floor.says(weak[0].program, MAX_BASELINE)
        return Dropped("validated", reason, f"{weak[0].raw_reward:.2f}")
    update = {
        "validation": Validation(reference_reward=1.0, stub_reward=0.0),
        "baseline": _best(task.hidden.baseline, families),
    }
    return Minted(replace(task, hidden=task.hidden.model_copy(update=update)))


def _sequences(target: Target, task: LoadedTask, work: ClassWork) -> tuple[HiddenSequence, ...]:
    """The class's hidden call sequences: recorded, stable, and widened (seeded by its name)."""
    ref = next(iter(class_refs([target]).values()))
    recorded = work.sequences.get(ref.key, ())
    if not recorded:
        return ()
    seed = zlib.crc32(target.symbol.encode("utf-8"))
    return class_sequences(work.jail, ref, recorded, task.hidden.grading, seed)


def _best(methods: Baseline | None, families: Baseline) -> Baseline:
    """The baseline: the best of the methods' mean (one program) and the degenerate classes."""
    mean = methods.raw_reward if methods else 0.0
    best = DegenerateScore(program=EACH_METHOD, raw_reward=mean)
    programs = sorted((best, *families.programs), key=lambda p: (-p.raw_reward, p.program))
    return Baseline(raw_reward=programs[0].raw_reward, programs=tuple(programs))


def returning_none(task: LoadedTask) -> bytes:
    """The target file with every member (of the class, of the module) returning None: a
    degenerate class or module."""
    source = original_source(task)
    for member in reversed(task.hidden.target.members):
        span = member.body_span
        source = source[: span.start_byte] + b"return None" + source[span.end_byte :]
    return source


def assemble(
    target: Target,
    methods: Sequence[TaskFiles],
    repo: RepoSnapshot,
    repo_dir: str,
    sequences: Sequence[HiddenSequence] = (),
) -> LoadedTask:
    """The class task (or module task: `target` a module) whose hidden inputs are `methods`'
    own, each naming its member, with their golden outcomes, examples, baselines and strength,
    and `sequences` (a class's; not validated yet)."""
    inputs: list[CallInput] = []
    expected: dict[int, Mapping[str, Any]] = {}
    for files in methods:
        member = files.hidden.target.qualname
        for item in files.inputs:
            index = len(inputs)
            inputs.append(item.model_copy(update={"index": index, "member": member}))
            expected[index] = files.expected[item.index]
    record = repo.record
    ident = task_id(record.key, record.commit, target.symbol, target.task_kind)
    source = Source(repo=record.key, commit=record.commit, path=target.path, symbol=target.symbol)
    examples: tuple[Example, ...] = tuple(ex for f in methods for ex in f.spec.examples)
    spec = TaskSpec(
        id=ident,
        source=source,
        kind=target.kind,
        signature=target.signature,
        docstring=target.docstring,
        examples=examples,
        hidden_inputs=len(inputs),
        body_statements=target.body_statements,
    )
    first = methods[0].hidden.grading
    grading = first.model_copy(
        update={
            "call_timeout_s": max(f.hidden.grading.call_timeout_s for f in methods),
            "total_timeout_s": max(f.hidden.grading.total_timeout_s for f in methods),
        }
    )
    hidden = HiddenTask(
        id=ident,
        repo_dir=repo_dir,
        source=source,
        target=target,
        grading=grading,
        validation=Validation(reference_reward=1.0, stub_reward=0.0),
        grader_version=GRADER_VERSION,
        baseline=_baseline(methods),
        strength=_strength(methods),
    )
    graded = tuple(f.hidden.target.qualname for f in methods)
    if target.task_kind is TaskKind.MODULE:
        prompt = render_module_prompt(target, examples, len(inputs), graded, len(sequences))
    else:
        prompt = render_class_prompt(target, examples, len(inputs), graded, len(sequences))
    return LoadedTask(
        spec=spec,
        hidden=hidden,
        inputs=tuple(inputs),
        expected=expected,
        prompt=prompt,
        repo=repo,
        sequences=tuple(sequences),
    )


def _baseline(methods: Sequence[TaskFiles]) -> Baseline:
    """The best degenerate class: each method's best degenerate program, their mean."""
    programs = []
    for files in methods:
        best = files.hidden.baseline
        name = files.hidden.target.name
        raw = best.raw_reward if best else 0.0
        top = (
            max(best.programs, key=lambda p: p.raw_reward).program if best and best.programs else ""
        )
        programs.append(DegenerateScore(program=f"{name}: {top}".rstrip(": "), raw_reward=raw))
    raw = sum(p.raw_reward for p in programs) / len(programs)
    return Baseline(raw_reward=round(raw, 6), programs=tuple(programs))


def _strength(methods: Sequence[TaskFiles]) -> Strength | None:
    """The methods' mutants together (None when a method was minted without a strength check)."""
    found = [f.hidden.strength for f in methods]
    known = [s for s in found if s is not None]
    if len(known) < len(found):
        return None
    mutants = sum(s.mutants for s in known)
    killed = sum(s.killed for s in known)
    return Strength(
        mutants=mutants,
        killed=killed,
        kill_rate=round(killed / mutants, 6) if mutants else 1.0,
        killed_before=sum(s.killed_before for s in known),
        likely_equivalent=sum(s.likely_equivalent for s in known),
        added_inputs=sum(s.added_inputs for s in known),
        searched_inputs=sum(s.searched_inputs for s in known),
        threshold=max(s.threshold for s in known),
    )
