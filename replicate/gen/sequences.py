"""A class task's hidden call sequences with their expected outcomes (`class_sequences`, the
stage `gen/classes.py` runs for each class task): the ones its tests recorded, and widened ones
drawn from those (`replicate.inputs.stateful`), each replayed on the reference in the jail twice
and kept when the two agree.

Recorded: replayed under hash seed 1, then under hash seed 2 with the clock shifted; kept when
both replays agree with each other and with what the harvest saw (its recorded outcomes, given
back by the runner: the tests' own view of the original), step by step and in the end state.

Widened:

1. The recorded sequences are replayed once with their arguments reported (`Replay.arguments`):
   the plain values of each step's argument slots, the widening's observations.
2. `widen_sequences` draws new ones, seeded (`StatefulBudget`: how many, how long).
3. The determinism gate, as for a target's golden outputs (`gen/golden.py`): the reference
   replays them under hash seed 1, then under hash seed 2 with the clock shifted; a sequence
   whose two replays differ in any step or in the end state, or that gave no steps (a timeout,
   a load error), is dropped.
4. A sequence whose class call raised (the reference's outcome is an error at its first step)
   tests one thing, the constructor's refusal: such sequences are kept up to
   `RAISED_FIRST_SHARE` of those kept, the first ones drawn, the rest dropped; without the cap
   a class whose widened constructor arguments are mostly invalid would be graded mostly on
   its refusals, which `raise` alone matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from replicate.core import (
    CallSequence,
    ClassRef,
    GradingSettings,
    HiddenSequence,
    SequenceStratum,
)
from replicate.gen.golden import CLOCK_SHIFT_DAYS
from replicate.grading import compare_sequences
from replicate.inputs import StatefulBudget, widen_sequences
from replicate.jail import Jail, Replay, replay

CLASS_WIDENING = StatefulBudget(sequences=20, max_steps=20)  # a class task's widened sequences
RAISED_FIRST_SHARE = 0.1  # of the kept widened sequences, at most this share raise at step 1


@dataclass(frozen=True)
class WidenedSequences:
    """The kept widened sequences and the reference's replay of each (the expected outcomes);
    how many were drawn, and dropped by the determinism gate or by the raised-first cap."""

    sequences: tuple[CallSequence, ...]
    expected: tuple[Replay, ...]
    drawn: int
    unstable: int
    raised_first: int


def widened_sequences(
    jail: Jail,
    cls: ClassRef,
    recorded: Sequence[CallSequence],
    settings: GradingSettings,
    budget: StatefulBudget,
    seed: int,
) -> WidenedSequences:
    """`cls`'s widened sequences from its `recorded` ones, with the reference's outcomes."""
    shown = replay(jail, cls, recorded, settings, encode_inputs=True)
    made = widen_sequences(recorded, [r.arguments for r in shown], budget, seed)
    if not made:
        return WidenedSequences((), (), 0, 0, 0)
    first = replay(jail, cls, made, settings, hash_seed=1)
    second = replay(jail, cls, made, settings, hash_seed=2, clock_shift_days=CLOCK_SHIFT_DAYS)
    return keep(made, first, second, settings)


def keep(
    made: Sequence[CallSequence],
    first: Sequence[Replay],
    second: Sequence[Replay],
    settings: GradingSettings,
) -> WidenedSequences:
    """The sequences whose two replays agree, those raising at the class call capped (no I/O)."""
    stable = [
        (sequence, one)
        for sequence, one, two in zip(made, first, second, strict=True)
        if one.steps and not one.problem and compare_sequences(one, two, settings).passed
    ]
    building = [pair for pair in stable if not _raised_first(pair[1])]
    raising = [pair for pair in stable if _raised_first(pair[1])]
    allowed = int(len(building) * RAISED_FIRST_SHARE / (1 - RAISED_FIRST_SHARE))
    kept_raising = {id(pair[0]) for pair in raising[:allowed]}
    kept = [pair for pair in stable if id(pair[0]) in kept_raising or not _raised_first(pair[1])]
    return WidenedSequences(
        sequences=tuple(sequence for sequence, _ in kept),
        expected=tuple(one for _, one in kept),
        drawn=len(made),
        unstable=len(made) - len(stable),
        raised_first=len(raising) - len(kept_raising),
    )


def _raised_first(one: Replay) -> bool:
    return one.steps[0].get("status") == "raised"


def class_sequences(
    jail: Jail,
    cls: ClassRef,
    recorded: Sequence[CallSequence],
    settings: GradingSettings,
    seed: int = 0,
    budget: StatefulBudget = CLASS_WIDENING,
) -> tuple[HiddenSequence, ...]:
    """`cls`'s hidden sequences: the stable recorded ones, then the kept widened ones (drawn
    from the stable recorded ones, `seed`ed), numbered in that order."""
    stable = stable_recorded(jail, cls, recorded, settings)
    if not stable:
        return ()
    widened = widened_sequences(jail, cls, [s for s, _ in stable], settings, budget, seed)
    found = [(SequenceStratum.RECORDED, s, r) for s, r in stable]
    pairs = zip(widened.sequences, widened.expected, strict=True)
    found += [(SequenceStratum.WIDENED, s, r) for s, r in pairs]
    return tuple(
        HiddenSequence(
            index=n,
            stratum=stratum,
            sequence=s.prefix(len(r.steps)),  # a replay ends where the class call raised
            steps=tuple(map(dict, r.steps)),
            state=r.state,
        )
        for n, (stratum, s, r) in enumerate(found)
    )


def stable_recorded(
    jail: Jail, cls: ClassRef, recorded: Sequence[CallSequence], settings: GradingSettings
) -> list[tuple[CallSequence, Replay]]:
    """The recorded sequences whose two replays on the reference agree with each other and with
    what the tests saw, each with its first replay."""
    if not recorded:
        return []
    seen = replay(jail, cls, recorded, settings, recorded=True)
    first = replay(jail, cls, recorded, settings, hash_seed=1)
    second = replay(jail, cls, recorded, settings, hash_seed=2, clock_shift_days=CLOCK_SHIFT_DAYS)
    return [
        (sequence, one)
        for sequence, saw, one, two in zip(recorded, seen, first, second, strict=True)
        if one.steps
        and not one.problem
        and compare_sequences(saw, one, settings).passed
        and compare_sequences(one, two, settings).passed
    ]
