"""Scoring a candidate's outcomes against the expected ones (pure).

The reward, per task:

1. Per hidden input, match is 0 or 1 (value or exception, then the arguments after the call,
   with how far the call and its result read each iterator argument where the task says so:
   `GradingSettings.arg_reads`, grader 7).
   The denominator is always all hidden inputs: a timeout, a crash or a missing result is a
   mismatch.
2. Per stratum s, score_s = matched_s / total_s.  Strata: ``traced`` (calls recorded while the
   repository's tests ran), ``widened`` (generated from them: hypothesis draws, mutants, doctest
   literals), ``edge`` (boundary values), ``raises`` (any input on which the reference raises).
3. raw = sum(w_s * score_s) / sum(w_s), over the strata present.  Default weights
   (`DEFAULT_WEIGHTS`): traced 1, widened 2, edge 0.5, raises 0.5.  Why: widened inputs are the
   ones the agent cannot see (the traced calls are in the workspace's tests), so they carry the
   largest share and a lookup table of the visible calls earns at most traced + traced-raises;
   edge cases and exception types probe behaviour at the margins of a function's contract, where
   a correct re-implementation is most likely to differ by accident, so they count half.
4. Normalisation: b = the best raw reward of the degenerate programs (return None, return the
   first argument, return the most common expected value, raise an exception, and each of these
   behind a lookup table of the visible calls: the traced calls made straight from the tests or
   a doctest, which the agent can read in the workspace — computed at gen time and recorded on
   the hidden task); reward = max(0, (raw - b) / (1 - b)).  So every degenerate program, and a
   table of the repository's tests, earns 0 and the reference 1.  The normalisation never
   switches off: a task is not minted when a program, table or not, reaches the floor of its
   kind — `MAX_BASELINE` (0.5) for ``return None``, ``return <first argument>`` and a
   ``raise`` (an identity or a validator, or hidden inputs the tests already show), or
   `MAX_CONSTANT_BASELINE` (0.9) for a constant (too few inputs tell the function from a
   constant; below that the normalisation handles it: a prime test on mostly composite numbers
   still has a dozen inputs that tell) — unless inputs found to tell it apart bring it under;
   and a minted task is checked to give every degenerate program a normalised reward of at most
   `MAX_DEGENERATE_REWARD`.  A baseline of 1 or more pays nothing (no such task is written).

A task minted before strata were weighted (no `stratum_weights`) keeps the plain fraction of all
inputs, and one without a baseline (minted before normalisation) is not normalised.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from replicate.batch import StoredOutcome
from replicate.core import CallInput, Counterexample, GradingSettings, StratumCount, StratumWeights
from replicate.grading.compare import Mismatch, compare_outcome

DEFAULT_WEIGHTS = StratumWeights(traced=1.0, widened=2.0, edge=0.5, raises=0.5)
MAX_BASELINE = 0.5  # a task on which None, the first argument or a raise earns this is not minted
MAX_CONSTANT_BASELINE = 0.9  # nor one on which a constant earns this (with a table or without)
MAX_DEGENERATE_REWARD = 0.05  # the most a degenerate program may earn, normalised, on a task


@dataclass(frozen=True)
class Score:
    reward: float  # the raw (weighted, not yet normalised) reward
    counts: tuple[StratumCount, ...]
    counterexample: Counterexample | None
    mismatches: int
    first_mismatch: CallInput | None = None


def raw_reward(counts: Sequence[StratumCount], weights: StratumWeights | None) -> float:
    """The weighted mean of the strata's match rates (the plain match rate without weights)."""
    present = [c for c in counts if c.total > 0]
    if not present:
        return 0.0
    shares = [(weights.model_dump()[c.stratum] if weights else float(c.total), c) for c in present]
    total_weight = sum(w for w, _ in shares)
    if total_weight <= 0:
        shares = [(float(c.total), c) for c in present]
        total_weight = sum(w for w, _ in shares)
    return sum(w * c.matched / c.total for w, c in shares) / total_weight


def normalise(raw: float, baseline: float | None) -> float:
    """max(0, (raw - b) / (1 - b)); 0 when b >= 1 (a degenerate program does as well as anything
    can: nothing is measured beyond it); the raw reward only for a task minted before
    normalisation (no baseline)."""
    if baseline is None or baseline <= 0.0:
        return raw
    if baseline >= 1.0:
        return 0.0
    return max(0.0, (raw - baseline) / (1.0 - baseline))


def matches(
    inputs: Sequence[CallInput],
    expected: Mapping[int, StoredOutcome],
    got: Mapping[int, StoredOutcome],
    settings: GradingSettings,
) -> list[Mismatch | None]:
    """Per input (in order), None when it matches, else the first difference."""
    return [compare_outcome(expected[i.index], got.get(i.index), settings) for i in inputs]


def score(
    inputs: Sequence[CallInput],
    expected: Mapping[int, StoredOutcome],
    got: Mapping[int, StoredOutcome],
    settings: GradingSettings,
) -> Score:
    return score_matches(inputs, matches(inputs, expected, got, settings), settings)


def score_matches(
    inputs: Sequence[CallInput], found: Sequence[Mismatch | None], settings: GradingSettings
) -> Score:
    totals: Counter[str] = Counter()
    matched: Counter[str] = Counter()
    first: tuple[CallInput, Mismatch] | None = None
    for item, mismatch in zip(inputs, found, strict=True):
        totals[item.stratum] += 1
        if mismatch is None:
            matched[item.stratum] += 1
        elif first is None:
            first = (item, mismatch)
    counts = tuple(
        StratumCount(stratum=name, total=totals[name], matched=matched[name])  # type: ignore[arg-type]
        for name in sorted(totals)
    )
    total = sum(totals.values())
    return Score(
        reward=raw_reward(counts, settings.stratum_weights),
        counts=counts,
        counterexample=counterexample(*first) if first else None,
        mismatches=total - sum(matched.values()),
        first_mismatch=first[0] if first else None,
    )


def counterexample(item: CallInput, mismatch: Mismatch) -> Counterexample:
    detail = mismatch.kind if not mismatch.path else f"{mismatch.kind} at {mismatch.path}"
    return Counterexample(
        index=item.index,
        stratum=item.stratum,
        call=item.call,
        expected=mismatch.expected,
        got=mismatch.got,
        detail=detail,
    )
