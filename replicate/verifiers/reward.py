"""Scoring a candidate's outcomes against the expected ones (pure).

The reward is the fraction of hidden inputs whose behaviour matches; the denominator is always all
hidden inputs (a timeout, a crash or a missing result is a mismatch).  Per-stratum counts and the
first mismatch (as a counterexample) go into the verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replicate.core.records import CallInput, Counterexample, GradingSettings, StratumCount
from replicate.verifiers.compare import Mismatch, compare_outcome


@dataclass(frozen=True)
class Score:
    reward: float
    counts: tuple[StratumCount, ...]
    counterexample: Counterexample | None
    mismatches: int


def score(
    inputs: Sequence[CallInput],
    expected: Mapping[int, Mapping[str, Any]],
    got: Mapping[int, Mapping[str, Any]],
    settings: GradingSettings,
) -> Score:
    totals: Counter[str] = Counter()
    matched: Counter[str] = Counter()
    first: tuple[CallInput, Mismatch] | None = None
    for item in inputs:
        totals[item.stratum] += 1
        mismatch = compare_outcome(expected[item.index], got.get(item.index), settings)
        if mismatch is None:
            matched[item.stratum] += 1
        elif first is None:
            first = (item, mismatch)
    total = sum(totals.values())
    counts = tuple(
        StratumCount(stratum=name, total=totals[name], matched=matched[name])  # type: ignore[arg-type]
        for name in sorted(totals)
    )
    reward = sum(matched.values()) / total if total else 0.0
    return Score(
        reward=reward,
        counts=counts,
        counterexample=_counterexample(*first) if first else None,
        mismatches=total - sum(matched.values()),
    )


def _counterexample(item: CallInput, mismatch: Mismatch) -> Counterexample:
    detail = mismatch.kind if not mismatch.path else f"{mismatch.kind} at {mismatch.path}"
    return Counterexample(
        index=item.index,
        stratum=item.stratum,
        call=item.call,
        expected=mismatch.expected,
        got=mismatch.got,
        detail=detail,
    )
