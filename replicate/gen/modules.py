"""Minting module tasks (task kind `module`) from the function and method tasks a gen minted.

A module task hides every function and method body of one file at once
(`languages/python_modules.py`); the rest of the repository is intact.  It is assembled as a
class task is (`gen/classes.py`, whose machinery it takes): its hidden inputs are its members'
own, taken from the function and method tasks of the same gen in that file, each naming its
member (`CallInput.member`, a qualname: `f`, `Cls.meth`), with their golden outcomes, already
agreed by two runs of the reference.  So are its guarantees:
- grading: a run per member, the raw reward the mean over members, each weighted by stratum
  within itself (`grading/classes.py`), so one function with many inputs cannot dominate;
- baseline: each member's best degenerate program, their mean; the file whose every body
  returns None is graded too, on its own and behind a table of the visible calls, each as a
  candidate is, class sequences included (`gen/class_families.py` `graded_files`), and a module
  on which one of them earns `MAX_BASELINE` is dropped;
- strength: a mutant of one member changes the file as the member task's mutant did and runs on
  the same inputs (the other bodies the original's in both), so the module's mutants are its
  members', killed as they were, each member held to today's kill-rate floor when it was minted
  (the module's kill rate is their pooled rate, so it is at least that floor);
- validation: the reference file earns 1.0 and the stub 0.0, graded as a candidate is.

The rule: a file is a module target when it has at least 2 functions and methods with code (its
function and method targets, and its class targets' members: dunders and properties too;
`languages/python_modules.py` `file_module`, found by discovery), and yields a module task when
at least `MIN_MODULE_MEMBERS` of them were minted as tasks by this gen
(`DropReason.MODULE_TOO_FEW_MEMBERS` otherwise).  Every function and method
body of the file is hidden, minted or not; only the minted members' inputs grade it (TASK.md
says which), the others reached through them.

Class sequences: the hidden call sequences of each class task of the file minted by this gen
(or an earlier run of it, from the ledger) are the module's too, as stored with that task (no
re-recording: each already agreed by two replays of the reference), renumbered in class order.
They are graded as a class task grades them (`grading/class_sequences.py`: a jail run per class,
step by step, the shortest failing prefix shrunk as the counterexample); the raw reward is half
the members' mean and half the sequences' score, each class weighing alike (docs/design.md,
"Module tasks").  A class of the file whose class task was dropped adds none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from replicate.batch import LoadedTask, TaskFiles, read_task_files
from replicate.core import (
    Baseline,
    DropReason,
    HiddenSequence,
    LedgerEntry,
    Target,
)
from replicate.gen.class_families import graded_files
from replicate.gen.classes import (
    Checks,
    ClassWork,
    assemble,
    mint_each,
    returning_none,
    validated,
)
from replicate.gen.ledger import decided
from replicate.gen.publish import Publisher
from replicate.gen.target import Dropped, Minted
from replicate.jail import Jail

MIN_MODULE_MEMBERS = 2  # members minted as tasks a module task needs
TOO_FEW_MEMBERS = DropReason.MODULE_TOO_FEW_MEMBERS.says(MIN_MODULE_MEMBERS)
EVERY_BODY_NONE = "module: every function and method returns None"


def every_body_none(task: LoadedTask, jail: Jail) -> Baseline:
    """The raw reward of the file whose every function and method returns None, and of a table
    of the visible calls in front of it, graded as a candidate is, sequences and all
    (`gen.class_families.graded_files`)."""
    return graded_files(task, jail, {EVERY_BODY_NONE: returning_none(task)})


MODULE_CHECKS = Checks(
    reference_misses=DropReason.REFERENCE_MODULE_MISSES.value,
    stub_earns=DropReason.STUB_MODULE_EARNS.value,
    at_floor=DropReason.DEGENERATE_MODULE_AT_FLOOR,
    degenerate=every_body_none,
)


def mint_modules(
    modules: Sequence[Target],
    singles: Iterable[Target],
    known: Mapping[str, LedgerEntry],
    publish: Publisher,
    work: ClassWork,
    workers: int = 1,
) -> None:
    """Mint (or resume from the ledger) a module task for each of `modules` whose function and
    method targets (among `singles`, those gen was to mint) are all decided in the ledger, from
    their tasks, `workers` at once; each published in order.  A module with a member `--limit`
    or the time budget left undecided is not decided either (a later run mints it)."""
    now = decided(publish.out, publish.ledger.key)
    wanted = frozenset(target.symbol for target in singles)
    ready = [m for m in modules if all(t.symbol in now for t in m.members if t.symbol in wanted)]
    publish.counter.keep("extracted", len(modules) - len(ready))  # `mint_each` counts the rest
    publish.skipped(DropReason.LIMIT_REACHED, len(modules) - len(ready))
    ids = (entry.task_id for entry in now.values() if entry.kept and entry.task_id)
    by_path, classes = _file_tasks(work, ids)

    def one(target: Target) -> Minted | Dropped:
        path = target.path
        return mint_module(target, by_path.get(path, []), work, classes.get(path, []))

    mint_each(ready, one, known, publish, workers)


def _file_tasks(
    work: ClassWork, ids: Iterable[str]
) -> tuple[dict[str, list[TaskFiles]], dict[str, list[TaskFiles]]]:
    """This repository's function and method tasks among `ids`, by their file; and its class
    tasks, by their file."""
    record = work.repo.record
    members: dict[str, list[TaskFiles]] = {}
    classes: dict[str, list[TaskFiles]] = {}
    for files in (read_task_files(work.out, ident) for ident in ids):
        source, target = files.hidden.source, files.hidden.target
        if (source.repo, source.commit) != (record.key, record.commit):
            continue
        if target.kind == "class":
            classes.setdefault(target.path, []).append(files)
        elif not target.members:
            members.setdefault(target.path, []).append(files)
    return members, classes


def class_sequences_of(classes: Sequence[TaskFiles]) -> tuple[HiddenSequence, ...]:
    """The call sequences stored with `classes` (class tasks of one file), in order of their
    class's qualname, renumbered."""
    ordered = sorted(classes, key=lambda files: files.hidden.target.qualname)
    found = [hidden for files in ordered for hidden in files.sequences]
    return tuple(h.model_copy(update={"index": n}) for n, h in enumerate(found))


def mint_module(
    target: Target,
    tasks: Sequence[TaskFiles],
    work: ClassWork,
    classes: Sequence[TaskFiles] = (),
) -> Minted | Dropped:
    """The module task of `target` from its members' tasks and the call sequences of its class
    tasks `classes`, validated; or why not."""
    by_name = {files.hidden.target.qualname: files for files in tasks}
    ordered = [by_name[m.qualname] for m in target.members if m.qualname in by_name]
    if len(ordered) < MIN_MODULE_MEMBERS:
        detail = f"{len(ordered)} of its {len(target.members)} functions and methods minted"
        return Dropped("traced", TOO_FEW_MEMBERS, detail)
    sequences = class_sequences_of(classes)
    task = assemble(target, ordered, work.repo, work.repo_dir, sequences)
    return validated(task, work.jail, MODULE_CHECKS)
