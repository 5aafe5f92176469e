"""The grading settings gen runs the reference under, and the ones a minted task records."""

from __future__ import annotations

from replicate.core import GradingSettings
from replicate.grading import DEFAULT_WEIGHTS

__all__ = ["ARG_ITEMS", "GOLDEN_SETTINGS", "WIDEN_SETTINGS", "leashed", "timing_settings"]

# Items kept of an iterator among a call's arguments after the call (docs/design.md §4: how far
# the call read it shows in its first items; a returned iterator keeps `max_items`, 10,000).
ARG_ITEMS = 1_000
# Outcomes say how far the call, and then its result, read each iterator argument (grader 7).
GOLDEN_SETTINGS = GradingSettings(
    call_timeout_s=5.0, total_timeout_s=300.0, max_arg_items=ARG_ITEMS, arg_reads=True
)
# Generated inputs first run under a short leash: a value that makes the reference loop for
# seconds is dropped, and costs at most this long.
WIDEN_SETTINGS = GradingSettings(
    call_timeout_s=1.0, total_timeout_s=60.0, max_arg_items=ARG_ITEMS, arg_reads=True
)


def leashed(slow_s: float) -> GradingSettings:
    """`WIDEN_SETTINGS` with the call limit cut to `slow_s`, for a first run of generated
    inputs: `screen` drops an input slower than that whatever it returns, so a call past it is
    stopped there (a value that makes the reference loop cost the whole second before)."""
    limit = min(WIDEN_SETTINGS.call_timeout_s, round(slow_s, 3))
    return WIDEN_SETTINGS.model_copy(update={"call_timeout_s": limit})


def timing_settings(max_call_s: float, total_call_s: float) -> GradingSettings:
    """Per-task limits relative to the reference's own time (EvalPlus style), strata weighted."""
    return GradingSettings(
        call_timeout_s=round(min(10.0, max(1.0, 10 * max_call_s)), 3),
        total_timeout_s=round(min(300.0, max(30.0, 5 * total_call_s + 20)), 3),
        max_arg_items=ARG_ITEMS,
        arg_reads=True,
        stratum_weights=DEFAULT_WEIGHTS,
    )
