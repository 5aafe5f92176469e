"""Minting rules: strata sizes, generated-input minimums, examples from traced calls only."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence

import pytest

from replicate.batch.store import LoadedTask
from replicate.core import DropReason
from replicate.core.records import (
    Baseline,
    CallInput,
    DegenerateScore,
    Provenance,
    Stratum,
    Strength,
)
from replicate.gen import target as mint
from replicate.gen.golden import Golden
from replicate.gen.separate import NONE, Separating
from replicate.gen.target import MIN_GENERATED, MIN_STRATUM, MIN_TRACED, _examples, settle_strata
from replicate.grading.reward import DEFAULT_WEIGHTS
from tests.integration.minted import SYMBOLS, Tiny


def _inputs(*groups: tuple[Stratum, Provenance, int]) -> list[CallInput]:
    out = []
    for stratum, provenance, count in groups:
        for _ in range(count):
            out.append(
                CallInput(index=len(out), stratum=stratum, provenance=provenance, pickle_b64="")
            )
    return out


def _sizes(inputs: Sequence[CallInput]) -> dict[str, int]:
    return dict(Counter(i.stratum for i in inputs))


def test_small_strata_are_folded_into_the_largest() -> None:
    inputs = _inputs(
        ("traced", "traced", 5), ("raises", "traced", 2), ("widened", "widened", 20),
        ("edge", "edge", 1),
    )  # fmt: skip
    assert _sizes(settle_strata(inputs)) == {"traced": 7, "widened": 21}
    kept = _inputs(("traced", "traced", 3), ("raises", "widened", 3), ("edge", "edge", 4))
    assert settle_strata(kept) == tuple(kept)
    lone = _inputs(("traced", "traced", 2))
    assert _sizes(settle_strata(lone)) == {"traced": 2}  # one stratum stays whatever its size
    tiny_two = _inputs(("traced", "traced", 2), ("raises", "traced", 2))
    assert _sizes(settle_strata(tiny_two)) == {"traced": 4}
    few_returns = _inputs(
        ("traced", "traced", 2), ("raises", "traced", 9), ("widened", "widened", 9)
    )
    assert _sizes(settle_strata(few_returns)) == {"raises": 9, "widened": 11}


def test_a_sparse_tasks_traced_inputs_make_no_traced_stratum() -> None:
    """Two traced calls, one generated input that returns, the rest raising (boltons'
    ManyToMany.remove was kept so, with a traced stratum of three).  Folded as any task's, the
    lone returning input joins the two traced ones in a traced stratum that the tests did not
    give (the control); sparse, they join it in the widened stratum."""
    inputs = _inputs(
        ("traced", "traced", 2), ("widened", "widened", 1), ("raises", "widened", 71)
    )  # fmt: skip
    assert _sizes(settle_strata(inputs)) == {"traced": 3, "raises": 71}
    assert _sizes(settle_strata(inputs, sparse=True)) == {"widened": 3, "raises": 71}
    raising = _inputs(("traced", "traced", 1), ("raises", "traced", 1), ("edge", "edge", 30))
    assert _sizes(settle_strata(raising, sparse=True)) == {"edge": 32}


def test_rules_are_stated() -> None:
    assert (MIN_TRACED, MIN_GENERATED, MIN_STRATUM) == (3, 5, 3)


def test_minted_tasks_keep_the_minimums(tiny: Tiny) -> None:
    for symbol in SYMBOLS:
        task = tiny.task(symbol)
        sizes = Counter(i.stratum for i in task.inputs)
        provenance = Counter(i.provenance for i in task.inputs)
        assert provenance["traced"] >= MIN_TRACED, symbol
        assert all(n >= MIN_STRATUM for n in sizes.values()) or len(sizes) == 1, (symbol, sizes)
        assert task.spec.hidden_inputs == len(task.inputs)
        assert task.hidden.grading.stratum_weights == DEFAULT_WEIGHTS
        assert task.hidden.baseline is not None
        generated = provenance["widened"] + provenance["edge"]
        if symbol != "tinypkg.core.Counter.add" or generated:
            assert generated >= MIN_GENERATED, (symbol, provenance)
        # generated inputs come after the traced ones, with their own indices
        traced = [i.index for i in task.inputs if i.provenance == "traced"]
        others = [i.index for i in task.inputs if i.provenance != "traced"]
        assert not others or max(traced) < min(others)


def test_examples_come_from_traced_calls() -> None:
    inputs = [CallInput(index=n, call=f"f({'x' * (9 - n)})", pickle_b64="") for n in range(7)] + [
        CallInput(index=10 + n, call="f()", provenance="widened", stratum="widened", pickle_b64="")
        for n in range(5)
    ]
    returned = {"status": "returned", "value": {"t": "int", "v": "1"}, "args": [], "kwargs": {}}
    golden = Golden(tuple(inputs), {i.index: returned for i in inputs}, 7, Counter(), 0.0, 0.0)
    examples, hidden = _examples(golden)
    # the two shortest traced calls are shown; the (shorter) generated calls stay hidden
    assert [e.call for e in examples] == ["f(xxxx)", "f(xxx)"]
    assert [i.index for i in hidden] == [0, 1, 2, 3, 4, 10, 11, 12, 13, 14]
    few = Golden(tuple(inputs[5:]), {i.index: returned for i in inputs}, 2, Counter(), 0.0, 0.0)
    assert _examples(few) == ((), tuple(inputs[5:]))


def _baseline(raw: float) -> Baseline:
    table = DegenerateScore(program="visible calls, else return None", raw_reward=raw)
    return Baseline(raw_reward=raw, programs=(table,))


def _golden(inputs: Sequence[CallInput]) -> Golden:
    expected = {i.index: {"status": "returned", "value": {"t": "int", "v": "1"}} for i in inputs}
    return Golden(tuple(inputs), expected, len(inputs), Counter(), 0.01, 0.1)


def test_a_task_at_the_floor_gets_separating_inputs_or_is_dropped(
    tiny: Tiny, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The floor check's control flow, the jailed runs replaced: the baseline is computed again
    on the task with the searched inputs, and the task stays only if it is under the floor."""
    task = tiny.task("tinypkg.core.clamp")
    g = _golden(_inputs(("traced", "traced", 4)))
    searched = _inputs(("widened", "widened", 9))
    found = Separating(tuple(searched), {i.index: g.expected[0] for i in searched}, (0.01,) * 9)
    rebuilt: list[Golden] = []

    def rebuild(golden: Golden) -> LoadedTask:
        rebuilt.append(golden)
        return task

    def run(after: float, missed: set[int] | None = None) -> tuple[Golden, Baseline] | mint.Dropped:
        results = iter([_baseline(1.0), _baseline(after)])
        searches = iter([found, NONE])  # the second round finds nothing more
        monkeypatch.setattr(mint, "baseline", lambda *_: next(results))
        monkeypatch.setattr(mint, "separating", lambda *_: next(searches))
        monkeypatch.setattr(mint, "_reference_misses", lambda *_: missed or set())
        return mint._under_the_floor(task, g, rebuild, None)  # type: ignore[arg-type]

    kept = run(0.3)
    assert isinstance(kept, tuple)
    assert len(kept[0].inputs) == 13 and kept[1].raw_reward == 0.3
    assert len(rebuilt[-1].inputs) == 13  # the baseline was computed on the task with them
    dropped = run(0.6)
    assert dropped == mint.Dropped(
        "validated",
        "a degenerate program (the visible calls, else return) scores 0.5 or more",
        "a degenerate program (visible calls, else return None) scores 0.60, at or above the "
        "floor 0.5; 9 searched inputs that tell it apart added",
    )
    # The reference graded on all the inputs together misses two searched ones: dropped,
    # though the baseline would be under the floor.
    missed = run(0.3, missed={5, 6})
    assert missed == mint.Dropped(
        "validated",
        DropReason.SEARCHED_MISS,
        f"the reference misses 2 of {len(task.inputs)} inputs; 9 searched inputs that tell it "
        "apart added",
    )
    monkeypatch.setattr(mint, "separating", lambda *_: NONE)
    monkeypatch.setattr(mint, "baseline", lambda *_: _baseline(1.0))
    none_found = mint._under_the_floor(task, g, rebuild, None)  # type: ignore[arg-type]
    assert isinstance(none_found, mint.Dropped)
    assert none_found.detail.endswith(
        "scores 1.00, at or above the floor 0.5; no searched input tells it apart"
    )
    # A program (not a table) that matches the original everywhere, and no input tells them
    # apart: the original is one (clamp's body is not one statement: the search ran first).
    same = DegenerateScore(program="return value", raw_reward=1.0)
    alike = Baseline(raw_reward=1.0, programs=(same,))
    monkeypatch.setattr(mint, "baseline", lambda *_: alike)
    degenerate = mint._under_the_floor(task, g, rebuild, None)  # type: ignore[arg-type]
    assert degenerate == mint.Dropped(
        "validated",
        "the original is a degenerate program",
        f"return value matches it on all {len(task.inputs)} inputs, searched ones included",
    )


def test_too_few_traced_calls_is_told_apart_from_nondeterminism() -> None:
    inputs = _inputs(("traced", "traced", 2), ("widened", "widened", 9))
    returned = {"status": "returned"}
    g = Golden(tuple(inputs), {i.index: returned for i in inputs}, 2, Counter(), 0.0, 0.0)
    assert mint._too_few(g, recorded=2) == mint.Dropped(
        "deterministic", "fewer than 3 traced calls"
    )
    nondeterministic = mint._too_few(g, recorded=5)
    assert nondeterministic is not None
    assert nondeterministic.reason == "fewer than 3 deterministic inputs"
    flaky = dataclasses.replace(g, drops=Counter({"nondeterministic outcome": 3}))
    assert mint._too_few(flaky, recorded=5) == mint.Dropped(
        "deterministic",
        "fewer than 3 deterministic inputs (most dropped: nondeterministic outcome)",
        "2 of 5 traced inputs kept; nondeterministic outcome on 3 of 5",
    )
    enough = _inputs(("traced", "traced", 3), ("widened", "widened", 9))
    g = Golden(tuple(enough), {i.index: returned for i in enough}, 3, Counter(), 0.0, 0.0)
    assert mint._too_few(g, recorded=3) is None


def test_generated_inputs_stand_in_for_too_few_traced_calls_only_under_the_strength_check() -> None:
    sparse = _golden(
        _inputs(("traced", "traced", 2), ("widened", "widened", mint.MIN_SPARSE_GENERATED))
    )
    assert mint._too_few(sparse, recorded=2) == mint.Dropped(
        "deterministic", "fewer than 3 traced calls"
    )  # no strength check: the old rule
    assert mint._too_few(sparse, recorded=2, sparse=True) is None
    short = _golden(
        _inputs(("traced", "traced", 1), ("widened", "widened", mint.MIN_SPARSE_GENERATED - 1))
    )
    assert mint._too_few(short, recorded=1, sparse=True) == mint.Dropped(
        "deterministic",
        "fewer than 3 traced calls",
        "19 generated inputs survive (20 stand in for too few traced calls)",
    )
    none_traced = _golden(_inputs(("widened", "widened", 40)))
    assert mint._too_few(none_traced, recorded=0, sparse=True) is not None


def _strength(mutants: int, killed: int) -> Strength:
    return Strength(
        mutants=mutants,
        killed=killed,
        killed_before=killed,
        kill_rate=killed / mutants if mutants else 1.0,
        threshold=0.8,
        searched_inputs=0,
        added_inputs=0,
        likely_equivalent=0,
    )


def test_a_sparse_task_stands_only_when_its_mutants_die() -> None:
    sparse = _golden(_inputs(("traced", "traced", 2), ("widened", "widened", 30)))
    assert mint._unvouched(sparse, _strength(10, 9)) is None
    weak = mint._unvouched(sparse, _strength(10, 5))
    assert weak is not None and weak.reason == (
        "fewer than 3 traced calls, generated inputs: mutant kill rate below 0.80"
    )
    untested = mint._unvouched(sparse, _strength(2, 2))
    assert untested is not None and untested.reason.endswith("fewer than 3 mutants to test them")
    full = _golden(_inputs(("traced", "traced", 3), ("widened", "widened", 30)))
    assert mint._unvouched(full, _strength(2, 2)) is None  # the ordinary rule applies there
