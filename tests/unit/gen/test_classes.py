"""A class task assembled from its methods' tasks: their inputs, each naming its member, their
golden outcomes, the best degenerate class as baseline and their mutants together."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.batch import RepoSnapshot, TaskFiles
from replicate.batch.store import SEQUENCES, read_task_files, write_task
from replicate.core import (
    Baseline,
    CallInput,
    CallSequence,
    ClassRef,
    DegenerateScore,
    GradingSettings,
    HiddenSequence,
    HiddenTask,
    RepoRecord,
    SequenceStratum,
    Source,
    Step,
    StepOutcome,
    Strength,
    Target,
    TaskKind,
    TaskSpec,
    Validation,
)
from replicate.errors import ReplicateError
from replicate.gen.classes import assemble
from replicate.languages.python_classes import extract_classes
from replicate.languages.python_extract import parse_tree

SOURCE = b'''\
class Stack:
    """Last in, first out."""

    def __init__(self):
        self.items = []

    def push(self, item):
        """Put item on top."""
        self.items.append(item)

    def pop(self):
        return self.items.pop()
'''
RECORD = RepoRecord(key="stacks", commit="c" * 40, url="", source_roots=(".",), python="3.11")


def _stack() -> Target:
    (found,) = extract_classes(SOURCE, parse_tree(SOURCE), "stacks.py", "stacks")
    return found


def _method(member: Target, n: int, raw: float, killed: int) -> TaskFiles:
    source = Source(repo="stacks", commit="c" * 40, path="stacks.py", symbol=member.symbol)
    spec = TaskSpec(
        id=member.name,
        source=source,
        kind=member.kind,
        signature=member.signature,
        hidden_inputs=n,
        body_statements=1,
    )
    hidden = HiddenTask(
        id=member.name,
        repo_dir="stacks",
        source=source,
        target=member,
        grading=GradingSettings(call_timeout_s=float(n)),
        validation=Validation(reference_reward=1.0, stub_reward=0.0),
        grader_version="g",
        baseline=Baseline(
            raw_reward=raw, programs=(DegenerateScore(program="raise", raw_reward=raw),)
        ),
        strength=Strength(
            mutants=4,
            killed=killed,
            kill_rate=killed / 4,
            killed_before=killed,
            likely_equivalent=0,
            added_inputs=0,
            searched_inputs=0,
            threshold=0.5,
        ),
    )
    inputs = tuple(
        CallInput(index=10 + i, call=f"{member.name}({i})", pickle_b64="") for i in range(n)
    )
    expected = {10 + i: {"status": "returned", "n": i} for i in range(n)}
    return TaskFiles(spec, hidden, inputs, expected, "")


def test_a_class_task_is_its_methods_inputs_each_naming_its_member() -> None:
    stack = _stack()
    push, pop = (m for m in stack.members if m.name in {"push", "pop"})
    methods = [_method(push, 3, 0.2, 4), _method(pop, 1, 0.6, 2)]
    task = assemble(stack, methods, RepoSnapshot(record=RECORD, root=Path("/nowhere")), "stacks")
    assert [(i.index, i.member, i.call) for i in task.inputs] == [
        (0, "Stack.push", "push(0)"),
        (1, "Stack.push", "push(1)"),
        (2, "Stack.push", "push(2)"),
        (3, "Stack.pop", "pop(0)"),
    ]
    assert [task.expected[i]["n"] for i in range(4)] == [0, 1, 2, 0]
    assert task.spec.task_kind is TaskKind.CLASS and task.spec.hidden_inputs == 4
    assert task.id.startswith("stacks__class.stacks.Stack__")
    baseline = task.hidden.baseline
    assert baseline is not None and baseline.raw_reward == 0.4  # the mean of 0.2 and 0.6
    strength = task.hidden.strength
    assert strength is not None and (strength.mutants, strength.killed) == (8, 6)
    assert strength.kill_rate == 0.75 and strength.threshold == 0.5
    assert task.hidden.grading.call_timeout_s == 3.0  # the slowest method's limit
    for text in (
        "class Stack:",
        "def __init__(self):",
        "def push(self, item):",
        "Put item on top.",
    ):
        assert text in task.prompt
    assert "4 hidden calls of `push`, `pop`" in task.prompt


def test_a_class_tasks_sequences_are_stored_beside_its_inputs_and_read_back(
    tmp_path: Path,
) -> None:
    stack = _stack()
    push, pop = (m for m in stack.members if m.name in {"push", "pop"})
    snapshot = RepoSnapshot(record=RECORD, root=tmp_path)
    task = assemble(stack, [_method(push, 2, 0.2, 4), _method(pop, 1, 0.6, 2)], snapshot, "stacks")
    cls = ClassRef(path="stacks.py", module="stacks", qualname="Stack")
    step = Step(name="__init__", args_b64="", outcome=StepOutcome.RETURNED)
    returned = {"status": "returned", "value": {"t": "none"}, "args": [], "kwargs": {}}
    sequences = [
        HiddenSequence(
            index=n,
            stratum=stratum,
            sequence=CallSequence(cls=cls, origin="tests/test_stack.py::test_push", steps=(step,)),
            steps=(returned,),
        )
        for n, stratum in enumerate(SequenceStratum)
    ]
    assert "call sequences" not in task.prompt
    task = assemble(
        stack, [_method(push, 2, 0.2, 4), _method(pop, 1, 0.6, 2)], snapshot, "stacks", sequences
    )
    assert task.sequences == tuple(sequences)
    assert "- 2 hidden call sequences: an instance built" in task.prompt
    assert "half the share of steps" in task.prompt
    files = (task.spec, task.hidden, task.prompt, task.inputs, task.expected)
    write_task(tmp_path, *files, task.sequences)
    assert read_task_files(tmp_path, task.id).sequences == tuple(sequences)
    path = tmp_path / "reference_impls" / task.id / SEQUENCES
    path.write_text(path.read_text().replace('"recorded"', '"guessed"'), encoding="utf-8")
    with pytest.raises(ReplicateError, match="at line 1"):
        read_task_files(tmp_path, task.id)
    path.unlink()  # a task without sequences has no such file, and reads as none
    assert read_task_files(tmp_path, task.id).sequences == ()
    write_task(tmp_path, *files)
    assert not path.exists()
