"""Call sequences on real code: more-itertools 10.5.0's `peekable`, whose `__next__` serves a
cache that only earlier calls (`peek`, `prepend`, indexing) fill.  Its own tests and doctests
are run once in the sandbox with the recorder; every recorded sequence replayed on the original
gives back what the tests saw, step for step; a mutant in the cache's path (`pop` for
`popleft`, reached only once two items are cached) fails sequences at a later step, the
positive control that justifies sequences: its first call of a fresh instance behaves.
Widened sequences drawn from the recorded ones replay on the original identically, again and
again; a mutant of `__getitem__` whose fault shows only on a negative index read while the
source is not yet cached survives every recorded sequence and is killed by the widened ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.core import GradingSettings
from replicate.core.progress import NullProgress
from replicate.core.sequences import CallSequence, ClassRef, StepKind
from replicate.gen.prepare import prepare_repo
from replicate.gen.sequences import WidenedSequences, widened_sequences
from replicate.grading.sequences import compare_sequences, failing_prefix
from replicate.harvest import SequenceBudget, record_sequences
from replicate.inputs import StatefulBudget
from replicate.jail import Jail
from replicate.jail.sequences import Replay, replay
from replicate.sandbox import get_sandbox
from tests.e2e.conftest import sdist_repo

pytestmark = pytest.mark.e2e

PEEKABLE = ClassRef(
    path="more_itertools/more.py", module="more_itertools.more", qualname="peekable"
)
SETTINGS = GradingSettings()
BUDGET = SequenceBudget(max_steps=40, max_sequences=40)
WIDENING = StatefulBudget(sequences=30, max_steps=20)
WIDENING_SEED = 7


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Jail, Path]:
    root = tmp_path_factory.mktemp("more-itertools-sequences")
    repo = sdist_repo(root, "more-itertools", "10.5.0")
    ready = prepare_repo(str(repo), None, root / "batch", False, NullProgress())
    return Jail(ready.context, get_sandbox("local")), ready.context.tree


@pytest.fixture(scope="module")
def recorded(prepared: tuple[Jail, Path]) -> tuple[CallSequence, ...]:
    return record_sequences(prepared[0], {PEEKABLE.key: PEEKABLE}, BUDGET)[PEEKABLE.key]


def test_sequences_are_recorded_within_their_bounds(recorded: tuple[CallSequence, ...]) -> None:
    assert 10 <= len(recorded) <= BUDGET.max_sequences
    assert all(1 <= len(s.steps) <= BUDGET.max_steps for s in recorded)
    assert any(len(s.steps) == BUDGET.max_steps for s in recorded)  # a long loop, cut
    names = {step.name for s in recorded for step in s.steps}
    assert {"__init__", "peek", "prepend", "__next__"} <= names
    assert {StepKind.OPERATOR, StepKind.METHOD} <= {step.kind for s in recorded for step in s.steps}
    # no one test item spends the budget: at most a quarter of it each
    per_test: dict[str, int] = {}
    for s in recorded:
        per_test[s.origin] = per_test.get(s.origin, 0) + 1
    assert max(per_test.values()) <= BUDGET.max_sequences // 4
    assert any(s.visible for s in recorded)


@pytest.fixture(scope="module")
def reference(
    prepared: tuple[Jail, Path], recorded: tuple[CallSequence, ...]
) -> tuple[Replay, ...]:
    return replay(prepared[0], PEEKABLE, recorded, SETTINGS)


def test_the_original_replays_what_its_tests_saw(
    prepared: tuple[Jail, Path], recorded: tuple[CallSequence, ...], reference: tuple[Replay, ...]
) -> None:
    seen = replay(prepared[0], PEEKABLE, recorded, SETTINGS, recorded=True)
    for sequence, expected, got in zip(recorded, seen, reference, strict=True):
        assert not expected.problem and not got.problem
        found = compare_sequences(expected, got, SETTINGS)
        assert found.passed and found.matched == len(sequence.steps), found.detail


def test_a_mutant_of_a_later_state_fails_at_a_later_step(
    prepared: tuple[Jail, Path], recorded: tuple[CallSequence, ...], reference: tuple[Replay, ...]
) -> None:
    jail, tree = prepared
    source = (tree / PEEKABLE.path).read_text()
    mutant = source.replace("return self._cache.popleft()", "return self._cache.pop()").encode()
    assert mutant != source.encode()
    got = replay(jail, PEEKABLE, recorded, SETTINGS, override=mutant)
    found = [compare_sequences(e, g, SETTINGS) for e, g in zip(reference, got, strict=True)]
    assert any(not c.passed for c in found), "the mutant passes every sequence"
    # a fresh instance behaves: what fails, fails at a later step (or in the end state)
    assert all(c.first_failing is None or c.first_failing >= 2 for c in found)
    assert any(c.passed for c in found)  # the sequences that never cache two items pass
    first = next(n for n, c in enumerate(found) if c.first_failing is not None)
    prefix = failing_prefix(recorded[first], found[first])
    assert prefix is not None and len(prefix.steps) == found[first].first_failing + 1
    # the counterexample is the shortest failing prefix: it fails, one step less passes
    shorter = prefix.prefix(len(prefix.steps) - 1)
    expected = replay(jail, PEEKABLE, [prefix, shorter], SETTINGS)
    again = replay(jail, PEEKABLE, [prefix, shorter], SETTINGS, override=mutant)
    assert not compare_sequences(expected[0], again[0], SETTINGS, state=False).passed
    assert compare_sequences(expected[1], again[1], SETTINGS, state=False).passed


@pytest.fixture(scope="module")
def widened(prepared: tuple[Jail, Path], recorded: tuple[CallSequence, ...]) -> WidenedSequences:
    return widened_sequences(prepared[0], PEEKABLE, recorded, SETTINGS, WIDENING, WIDENING_SEED)


def test_widened_sequences_replay_on_the_original_identically(
    prepared: tuple[Jail, Path], recorded: tuple[CallSequence, ...], widened: WidenedSequences
) -> None:
    assert widened.drawn == WIDENING.sequences and widened.unstable == 0
    assert len(widened.sequences) >= WIDENING.sequences * 3 // 4
    names = {step.name for s in recorded for step in s.steps}
    assert all(2 <= len(s.steps) <= WIDENING.max_steps for s in widened.sequences)
    assert {step.name for s in widened.sequences for step in s.steps} <= names
    old = {step.args_b64 for s in recorded for step in s.steps}
    assert any(step.args_b64 not in old for s in widened.sequences for step in s.steps)
    # the gate replayed them twice; a third, fresh replay gives the expected outcomes again
    again = replay(prepared[0], PEEKABLE, widened.sequences, SETTINGS)
    for expected, got in zip(widened.expected, again, strict=True):
        assert compare_sequences(expected, got, SETTINGS).passed


def test_a_mutant_the_recorded_sequences_miss_is_killed_by_the_widened_ones(
    prepared: tuple[Jail, Path],
    recorded: tuple[CallSequence, ...],
    reference: tuple[Replay, ...],
    widened: WidenedSequences,
) -> None:
    jail, tree = prepared
    source = (tree / PEEKABLE.path).read_text()
    negative = "        if index < 0:\n            self._cache.extend(self._it)"
    mutant = source.replace(negative, negative.replace("if index < 0", "if not index < 0"))
    assert mutant != source
    on_recorded = replay(jail, PEEKABLE, recorded, SETTINGS, override=mutant.encode())
    assert all(
        compare_sequences(e, g, SETTINGS).passed
        for e, g in zip(reference, on_recorded, strict=True)
    ), "the recorded sequences already kill the mutant: no control"
    on_widened = replay(jail, PEEKABLE, widened.sequences, SETTINGS, override=mutant.encode())
    found = [
        compare_sequences(e, g, SETTINGS) for e, g in zip(widened.expected, on_widened, strict=True)
    ]
    assert any(not c.passed for c in found), "the widened sequences miss the mutant too"
    # what kills it is a later state: a negative index read once a few steps cached a part
    assert all(c.first_failing is None or c.first_failing >= 2 for c in found)
