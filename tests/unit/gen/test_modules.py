"""A module task assembled from its file's function and method tasks: their inputs, each naming
its member, the file's every body hidden, the mean baseline and pooled mutants; which files are
module targets; fewer than two minted members a drop with its reason; `--kinds` asking for it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from replicate.batch import RepoSnapshot, TaskFiles
from replicate.core import (
    DropReason,
    HiddenSequence,
    NullProgress,
    SequenceStratum,
    Target,
    TaskKind,
    checked_reason,
)
from replicate.core.module_prompt import MODULE_SEQUENCE_SENTENCE
from replicate.errors import ReplicateError
from replicate.gen.audit import LeakAudit
from replicate.gen.classes import ClassWork, assemble, returning_none
from replicate.gen.funnel import STAGES, FunnelCounter
from replicate.gen.ledger import Ledger, LedgerKey, decided
from replicate.gen.modules import (
    EVERY_BODY_NONE,
    MODULE_CHECKS,
    TOO_FEW_MEMBERS,
    class_sequences_of,
    mint_module,
    mint_modules,
)
from replicate.gen.pipeline import DEFAULT_KINDS, MINTED_KINDS, parse_kinds
from replicate.gen.publish import Publisher
from replicate.gen.target import Dropped
from replicate.grading import MAX_BASELINE
from replicate.languages.python_classes import extract_classes
from replicate.languages.python_extract import extract_targets, parse_tree
from replicate.languages.python_modules import file_module
from tests.unit.gen.test_classes import RECORD, _method
from tests.unit.grading.test_class_sequences import _hidden

SOURCE = b'''\
"""Stacks."""

LIMIT = 3


def top(stack):
    return stack.items[-1]


class Stack:
    def __init__(self):
        self.items = []

    def push(self, item):
        """Put item on top."""
        self.items.append(item)
'''


def _tree(tmp_path: Path) -> Path:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "stacks.py").write_bytes(SOURCE)
    (tmp_path / "lone.py").write_bytes(b"def one():\n    return 1\n")
    return tmp_path


def _targets(tmp_path: Path) -> list[Target]:
    tree = _tree(tmp_path)
    found = []
    for name in ("stacks", "lone"):
        data = (tree / f"{name}.py").read_bytes()
        parsed = parse_tree(data)
        targets = extract_targets(data, parsed, f"{name}.py", name)
        classes = extract_classes(data, parsed, f"{name}.py", name)
        found.append(file_module(data, f"{name}.py", name, targets, classes))
    return [module for module in found if module is not None]


def test_a_file_with_two_functions_or_methods_is_a_module_target(tmp_path: Path) -> None:
    (stacks,) = _targets(tmp_path)  # lone.py has one function: no module target
    assert stacks.symbol == "stacks" and stacks.path == "stacks.py"
    # __init__ is no method target, but a class member: its body is hidden too
    assert [m.qualname for m in stacks.members] == ["top", "Stack.__init__", "Stack.push"]


def test_a_module_task_is_its_members_inputs_each_naming_its_member(tmp_path: Path) -> None:
    (stacks,) = _targets(tmp_path)
    top, _, push = stacks.members
    members = [_method(top, 3, 0.3, 4), _method(push, 1, 0.1, 2)]
    repo = RepoSnapshot(record=RECORD, root=tmp_path)
    task = assemble(stacks, members, repo, "stacks")
    assert [(i.index, i.member) for i in task.inputs] == [
        (0, "top"), (1, "top"), (2, "top"), (3, "Stack.push"),
    ]  # fmt: skip
    assert task.spec.task_kind is TaskKind.MODULE and task.spec.kind == "module"
    assert task.id.startswith("stacks__module.stacks__") and task.hidden.target == stacks
    baseline, strength = task.hidden.baseline, task.hidden.strength
    assert baseline is not None and baseline.raw_reward == 0.2  # the mean of 0.3 and 0.1
    assert strength is not None and (strength.mutants, strength.killed) == (8, 6)
    assert "# Implement the module `stacks`" in task.prompt
    assert "4 hidden calls of `top`, `Stack.push`" in task.prompt
    assert "def __init__(self):" in task.prompt  # a member that must exist, graded or not


def test_a_module_task_takes_its_class_tasks_sequences_renumbered(tmp_path: Path) -> None:
    (stacks,) = _targets(tmp_path)
    top, _, push = stacks.members
    widened = _hidden(5, SequenceStratum.WIDENED, None, 1)
    bag = _class_files("Bag", _hidden(0, SequenceStratum.RECORDED, None, 2), widened)
    box = _class_files("Box", _hidden(0, SequenceStratum.RECORDED, None, 3))
    sequences = class_sequences_of([box, bag])  # in class order, whatever the tasks' order
    assert [h.index for h in sequences] == [0, 1, 2]
    assert [h.stratum for h in sequences] == [
        SequenceStratum.RECORDED, SequenceStratum.WIDENED, SequenceStratum.RECORDED,
    ]  # fmt: skip
    assert sequences[1].sequence == widened.sequence and class_sequences_of([]) == ()
    repo = RepoSnapshot(record=RECORD, root=tmp_path)
    members = [_method(top, 1, 0.0, 1), _method(push, 1, 0.0, 1)]
    task = assemble(stacks, members, repo, "stacks", sequences)
    assert task.sequences == sequences and "3 hidden call sequences" in task.prompt
    assert MODULE_SEQUENCE_SENTENCE in task.prompt
    plain = assemble(stacks, members, repo, "stacks")
    assert "call sequences" not in plain.prompt


def _class_files(qualname: str, *hidden: HiddenSequence) -> TaskFiles:
    target = SimpleNamespace(qualname=qualname)
    return cast(TaskFiles, SimpleNamespace(hidden=SimpleNamespace(target=target), sequences=hidden))


def test_the_stub_and_the_every_none_module_replace_every_body(tmp_path: Path) -> None:
    (stacks,) = _targets(tmp_path / "tree")
    top, _, push = stacks.members
    repo = RepoSnapshot(record=RECORD, root=tmp_path)
    task = assemble(stacks, [_method(top, 1, 0.0, 1), _method(push, 1, 0.0, 1)], repo, "s")
    stubbed, none = task.stubbed_source(), returning_none(task)
    for program, body in ((stubbed, b"raise NotImplementedError"), (none, b"return None")):
        assert program.count(body) == 3 and b"LIMIT = 3" in program
        assert b'"""Put item on top."""' in program and b"append" not in program
        compile(program, "stacks.py", "exec")


def test_fewer_than_two_minted_members_is_a_drop_with_its_reason(tmp_path: Path) -> None:
    (stacks,) = _targets(tmp_path)
    found = mint_module(stacks, [_method(stacks.members[0], 2, 0.0, 1)], work=None)  # type: ignore[arg-type]
    assert isinstance(found, Dropped) and found.reason == TOO_FEW_MEMBERS
    assert found.detail == "1 of its 3 functions and methods minted"
    for text in (
        TOO_FEW_MEMBERS,
        MODULE_CHECKS.reference_misses,
        MODULE_CHECKS.stub_earns,
        none_earns := MODULE_CHECKS.at_floor.says(EVERY_BODY_NONE, MAX_BASELINE),
    ):
        assert checked_reason(text) == text and DropReason.of(text) is not DropReason.UNKNOWN
    assert DropReason.of(none_earns) is DropReason.DEGENERATE_MODULE_AT_FLOOR


def test_gen_mints_module_tasks_when_asked_with_their_members_kinds() -> None:
    assert TaskKind.MODULE in MINTED_KINDS and TaskKind.MODULE not in DEFAULT_KINDS
    assert parse_kinds("function,method,module") == {
        TaskKind.FUNCTION, TaskKind.METHOD, TaskKind.MODULE,
    }  # fmt: skip
    with pytest.raises(ReplicateError, match="module needs function and method too"):
        parse_kinds("method,module")


def test_a_module_waits_until_every_member_gen_was_to_mint_is_decided(tmp_path: Path) -> None:
    """A file with a member `--limit` left undecided is not decided (a later run mints it); one
    whose members are all decided (here dropped: no task) is dropped for too few members."""
    (stacks,) = _targets(tmp_path / "tree")
    moved = tuple(m.model_copy(update={"module": "others"}) for m in stacks.members)
    other = stacks.model_copy(update={"module": "others", "path": "others.py", "members": moved})
    out = tmp_path / "batch"
    out.mkdir()
    key = LedgerKey("stacks", "c" * 40, "g", None)
    ledger = Ledger(out, key)
    for member in stacks.members:
        ledger.append(ledger.entry(member.symbol, "traced", reason=DropReason.NOT_CALLED.value))
    counter = FunnelCounter()
    publish = Publisher(out, ledger, counter, LeakAudit(()), NullProgress())
    work = ClassWork(out, RepoSnapshot(record=RECORD, root=tmp_path), "stacks", None)  # type: ignore[arg-type]
    singles = [*stacks.members, other.members[0]]  # others.top: not decided
    mint_modules([stacks, other], singles, {}, publish, work)
    found = decided(out, key)
    assert found["stacks"].reason == TOO_FEW_MEMBERS and "others" not in found
    assert counter.drops[STAGES[2]][DropReason.LIMIT_REACHED.value] == 1
    assert counter.counts[STAGES[0]] == 2  # both extracted, one decided
