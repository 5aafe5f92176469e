"""A module task graded on its class's call sequences too, in the real jail: the tiny repository's
`core.py` assembled from its function and method tasks with a call sequence of `Counter` (as a
module task takes its class tasks' stored sequences), validated (the reference file 1.0, the stub
0.0); a fault only a later state reaches passes every member's input, fails the sequence, and
its counterexample is the sequence's shortest failing prefix.  The positive control: the same
file without the sequence earns 1.0."""

from __future__ import annotations

import pytest

from replicate.batch import LoadedTask
from replicate.core import CallSequence, ClassRef
from replicate.gen.classes import assemble, validated
from replicate.gen.modules import MODULE_CHECKS
from replicate.gen.target import Minted
from replicate.grading import grade_text
from replicate.jail import Jail
from replicate.jail.calls import RepoContext
from replicate.languages.python import discover_python
from replicate.sandbox.base import Sandbox
from tests.integration.grading.test_class_sequences import ORIGINAL, _step, widened
from tests.integration.minted import CORE_PATH, SYMBOLS, Tiny

# wrong only when 3 is added to a total of exactly 8, which no test's Counter reached
MUTANT = (
    "        if self.total == 8 and amount == 3:\n"
    "            self.total += 1\n"
    "        self.total += amount\n"
    "        return self.total\n"
)
ADDS = (1, 5, 2, 3, 1)  # totals 1, 6, 8, then 3 is added to 8


def _module_task(tiny: Tiny, jail: Jail, with_sequence: bool) -> LoadedTask:
    members = [tiny.task(symbol) for symbol in SYMBOLS]
    (module,) = [m for m in discover_python(tiny.repo).modules if m.path == CORE_PATH]
    cls = ClassRef(path=module.path, module=module.module, qualname="Counter")
    steps = (_step("__init__", 0), *(_step("add", n) for n in ADDS))
    sequence = CallSequence(cls=cls, ending="widened", steps=steps)
    sequences = (widened(jail, sequence, members[0].hidden.grading),) if with_sequence else ()
    task = assemble(module, members, members[0].repo, members[0].hidden.repo_dir, sequences)
    found = validated(task, jail, MODULE_CHECKS)
    assert isinstance(found, Minted), found  # the reference file 1.0, the stub 0.0
    return found.task


def test_a_module_task_grades_its_classes_sequences_and_shows_the_failing_prefix(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    jail = Jail(tiny_ctx, local_sandbox)
    task = _module_task(tiny, jail, with_sequence=True)
    assert task.spec.kind == "module" and len(task.sequences) == 1
    assert "1 hidden call sequences" in task.prompt
    source = task.original_source().decode("utf-8")
    assert source.count(ORIGINAL) == 1
    mutant = source.replace(ORIGINAL, MUTANT)
    reference = grade_text(task, source, jail)
    assert reference.reward == 1.0 and "all 1 call sequences match" in reference.reason
    found = grade_text(task, mutant, jail)
    assert found.status == "graded" and found.counts is not None
    # every member's input matches; the sequence fails at its fifth step: 4 of 6 matched
    assert f"all {len(task.inputs)} hidden inputs match" in found.reason, found.reason
    assert "1 of 1 call sequences differ" in found.reason
    assert found.raw_reward == pytest.approx(0.5 + 0.5 * 4 / 6, abs=1e-6)
    example = found.counterexample
    assert example is not None and example.stratum == "widened"
    assert example.call == (
        "x = Counter(0); x.add(1) -> 1; x.add(5) -> 6; x.add(2) -> 8; x.add(3) -> 11"
    )  # the shortest failing prefix: no step can go (each is needed to reach 8)
    assert example.detail == "call sequence: its first 5 of 6 steps fail"
    # the positive control: without the class's sequence, the module cannot tell
    plain = _module_task(tiny, jail, with_sequence=False)
    assert grade_text(plain, mutant, jail).reward == 1.0
