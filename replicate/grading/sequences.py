"""Comparing a call sequence's replay with the expected one, step by step (no I/O).

Each step's outcome is compared as one call's (`compare.compare_outcome`: the value it returned,
or the exception it raised; ``self`` returned is a step of its own); the comparison stops at the
first step that differs (what follows it ran on a different state).  When every step agrees,
the instance's end state (its fields, by value) is compared too, if the expected one is
gradable (no opaque part: a lock's owner, a function without a verified name).  The dense
reward is the share of steps matched (`SequenceComparison.reward`), the counterexample the
shortest failing prefix (`failing_prefix`).
"""

from __future__ import annotations

from replicate.core import CallSequence, GradingSettings, SequenceComparison
from replicate.grading.compare import compare_outcome, is_gradable
from replicate.jail import Replay


def compare_sequences(
    expected: Replay, got: Replay, settings: GradingSettings, *, state: bool = True
) -> SequenceComparison:
    """`got` against `expected` step by step (and their end states, with `state`)."""
    total = len(expected.steps)
    for n, step in enumerate(expected.steps):
        found = got.steps[n] if n < len(got.steps) else None
        mismatch = compare_outcome(step, found, settings)
        if mismatch is not None:
            why = got.problem if found is None and got.problem else mismatch.kind
            detail = f"step {n}: {why} at {mismatch.path}: expected {mismatch.expected}, got "
            return SequenceComparison(
                steps=total, matched=n, first_failing=n, detail=detail + mismatch.got
            )
    gradable = state and expected.state is not None and _gradable(expected.state, settings)
    if not gradable:
        return SequenceComparison(steps=total, matched=total)
    mismatch = compare_outcome(_as_outcome(expected.state), _as_outcome(got.state), settings)
    return SequenceComparison(
        steps=total,
        matched=total,
        state_compared=True,
        state_matches=mismatch is None,
        detail="" if mismatch is None else f"end state: {mismatch.path}: {mismatch.got}",
    )


def failing_prefix(sequence: CallSequence, comparison: SequenceComparison) -> CallSequence | None:
    """The shortest prefix of `sequence` that fails (None: it passes): the counterexample."""
    length = comparison.failing_prefix
    return None if length is None else sequence.prefix(length)


def _as_outcome(state: object) -> dict[str, object]:
    value = state if state is not None else {"t": "none"}
    return {"status": "returned", "value": value, "args": [], "kwargs": {}}


def _gradable(state: object, settings: GradingSettings) -> bool:
    return is_gradable(_as_outcome(state), settings)
