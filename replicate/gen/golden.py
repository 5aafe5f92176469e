"""Golden outputs: run the reference on every harvested input, twice, with different hash seeds.

An input is kept when both runs return an outcome, the outcome can be compared (nothing opaque,
too large or unverifiable), and the two runs agree exactly.  A run that dies midway is resumed
after the input it died on, which is dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replicate.core.records import CallInput, GradingSettings, Target
from replicate.harness.jail import JailRun, RepoContext, run_calls
from replicate.harness.sandbox.base import Sandbox
from replicate.verifiers.compare import is_gradable, render, same_outcome

GOLDEN_SETTINGS = GradingSettings(call_timeout_s=5.0, total_timeout_s=300.0)
# The second run also moves the wall clock ahead, so an output that depends on "now" (a
# doctest's `datetime.utcnow()` compared with the current time, say) shows as nondeterministic.
CLOCK_SHIFT_DAYS = 400
MAX_RESUMES = 8

Outcome = Mapping[str, Any]


@dataclass(frozen=True)
class Golden:
    inputs: tuple[CallInput, ...]
    expected: Mapping[int, Outcome]
    encodable: int  # inputs that loaded and gave a comparable outcome in the first run
    drops: Counter[str]
    max_call_s: float
    total_call_s: float
    infra: str | None = None


def _run_resuming(
    ctx: RepoContext,
    target: Target,
    inputs: Sequence[CallInput],
    sandbox: Sandbox,
    seed: int,
    clock_shift_days: int = 0,
) -> tuple[dict[int, Outcome], Counter[str], str | None]:
    """All outcomes of one seed; an input on which the process dies is dropped and skipped."""
    outcomes: dict[int, Outcome] = {}
    drops: Counter[str] = Counter()
    pending = list(inputs)
    for _ in range(MAX_RESUMES):
        run: JailRun = run_calls(
            ctx,
            target,
            pending,
            sandbox,
            GOLDEN_SETTINGS,
            hash_seed=seed,
            encode_inputs=True,
            clock_shift_days=clock_shift_days,
        )
        if run.infra_problem():
            return outcomes, drops, run.infra_problem()
        if run.parsed.import_error is not None:
            return outcomes, drops, f"reference does not import: {run.parsed.import_error}"
        outcomes.update(run.parsed.outcomes)
        pending = [item for item in pending if item.index not in outcomes]
        if not pending:
            break
        drops["reference hangs or crashes the process"] += 1
        pending = pending[1:]
    return outcomes, drops, None


def _drop_reason(first: Outcome | None, second: Outcome | None) -> str | None:
    if first is None or second is None:
        return "reference hangs or crashes the process"
    status = first.get("status")
    if status == "load_error":
        return "input does not load in the jail"
    if status == "timeout":
        return "reference hangs"
    if not is_gradable(first, GOLDEN_SETTINGS):
        return "outcome not comparable (opaque, too large or unverifiable)"
    if not same_outcome(first, second):
        return "nondeterministic outcome"
    return None


def golden(
    ctx: RepoContext, target: Target, inputs: Sequence[CallInput], sandbox: Sandbox
) -> Golden:
    first, drops, infra = _run_resuming(ctx, target, inputs, sandbox, seed=1)
    if infra:
        return Golden((), {}, 0, drops, 0.0, 0.0, infra)
    second, _, infra = _run_resuming(
        ctx, target, inputs, sandbox, seed=2, clock_shift_days=CLOCK_SHIFT_DAYS
    )
    if infra:
        return Golden((), {}, 0, drops, 0.0, 0.0, infra)
    kept: list[CallInput] = []
    expected: dict[int, Outcome] = {}
    encodable = 0
    times: list[float] = []
    for item in inputs:
        a, b = first.get(item.index), second.get(item.index)
        reason = _drop_reason(a, b)
        if reason not in (None, "nondeterministic outcome"):
            drops[reason] += 1
            continue
        encodable += 1
        if reason:
            drops[reason] += 1
            continue
        assert a is not None and b is not None
        times.append(max(float(a.get("t", 0.0)), float(b.get("t", 0.0))))
        stratum = "raises" if a.get("status") == "raised" else "traced"
        kept.append(item.model_copy(update={"stratum": stratum, "call": render_call(target, a)}))
        expected[item.index] = _strip_inputs(a)
    return Golden(
        tuple(kept), expected, encodable, drops, max(times, default=0.0), sum(times), None
    )


def _strip_inputs(outcome: Outcome) -> Outcome:
    return {k: v for k, v in outcome.items() if k not in ("args_in", "kwargs_in", "t")}


def render_call(target: Target, outcome: Outcome) -> str:
    """`name(arg, key=value)` from the runner's encoding of the arguments before the call."""
    args = list(outcome.get("args_in") or [])
    kwargs = dict(outcome.get("kwargs_in") or {})
    prefix = target.name
    if target.kind == "method" and args:
        prefix = f"{render(args[0], 100)}.{target.name}"
        args = args[1:]
    elif target.kind in ("classmethod", "staticmethod") and target.class_name:
        prefix = f"{target.class_name}.{target.name}"
    parts = [render(a, 120) for a in args] + [f"{k}={render(v, 120)}" for k, v in kwargs.items()]
    return f"{prefix}({', '.join(parts)})"


def timing_settings(max_call_s: float, total_call_s: float) -> GradingSettings:
    """Per-task limits relative to the reference's own time (EvalPlus style)."""
    return GradingSettings(
        call_timeout_s=round(min(10.0, max(1.0, 10 * max_call_s)), 3),
        total_timeout_s=round(min(300.0, max(30.0, 5 * total_call_s + 20)), 3),
    )
