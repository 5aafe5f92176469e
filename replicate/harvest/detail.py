"""What the harvest saw of one target, in words: the detail behind a short drop reason."""

from __future__ import annotations

from replicate.harvest.budget import STALE_CALLS
from replicate.harvest.reading import HarvestResult, TargetStats

# Why the recorder stopped looking at a test item's calls of a target (the plugin's words).
STOPPED = {
    "repeats": f"after {STALE_CALLS} repeats",
    "share used": "after their share of the budget",
    "attempts used": "after their pickling attempts",
    "budget spent": "after the budget was spent",
}


def harvest_detail(harvest: HarvestResult, symbol: str) -> str:
    """Why the tests gave `symbol` the traced calls they did, e.g. "called 5000 times with 1
    distinct argument; traced 1 (budget spent in test T)"; '' when nothing is known."""
    if symbol in harvest.not_wrapped:
        return f"not wrapped: {harvest.not_wrapped[symbol]}"
    stats = harvest.stats.get(symbol)
    if stats is None:
        return "not called by the tests" if harvest.configured else ""
    parts = [_calls(stats), f"traced {stats.recorded}{_budget(stats)}"]
    drops = harvest.drops.get(symbol)
    if drops:
        reason, count = drops.most_common(1)[0]
        why = harvest.drop_details.get((symbol, reason), "")
        parts.append(f"{stats.dropped} dropped, {count} as {reason}" + (f" ({why})" if why else ""))
    return "; ".join(parts)


def _calls(stats: TargetStats) -> str:
    times = "once" if stats.calls == 1 else f"{stats.calls} times"
    where = f" in {stats.tests} tests" if stats.tests > 1 else ""
    text = f"called {times}{where}"
    if 0 < stats.distinct < stats.calls:
        plural = "" if stats.distinct == 1 else "s"
        text += f" with {stats.distinct} distinct argument{plural} seen"
    if stats.tests > 1 and stats.busiest_calls * 2 > stats.calls:
        text += f" ({stats.busiest_calls} in test {stats.busiest})"
    return text


def _budget(stats: TargetStats) -> str:
    if stats.spent_in:
        return f" (budget spent in test {stats.spent_in})"
    let_be = ", ".join(f"{n} {STOPPED.get(why, why)}" for why, n in sorted(stats.stopped.items()))
    return f" (tests no longer looked at: {let_be})" if let_be else ""
