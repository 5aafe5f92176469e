"""Shrinking a counterexample that came from a generated input, against the reference.

A generated input is a seed call with some argument slots replaced by plain values
(`replicate.inputs.widening`).  Shrinking proposes simpler values for those slots — shorter
containers and strings, integers nearer zero, elements dropped or simplified, in shortlex order
as hypothesis's shrinker orders them — and runs the reference and the candidate on a batch of
them in the jail (one process each per round: every evaluation is a sandboxed run, so they go in
batches rather than one at a time as hypothesis's own shrinker would need).  The simplest
proposal on which the reference still gives a comparable outcome and the candidate differs
becomes the counterexample; that repeats for a few rounds within a time budget.  Feedback only:
the reward never depends on it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from replicate.batch import LoadedTask
from replicate.core import CallInput, Counterexample
from replicate.executors import result_of
from replicate.grading.compare import compare_outcome, is_gradable
from replicate.grading.reward import counterexample
from replicate.inputs import ParamSlot, render_call, with_replacements
from replicate.jail import Jail, JailRun
from replicate.values import Items, plain

ROUNDS = 4
PER_ROUND = 24
BUDGET_S = 6.0
_EACH = 8  # positions of a container tried one at a time


def simpler(value: Any) -> list[Any]:
    """Values simpler than `value`, of the same type (never `value` itself)."""
    maker = _SIMPLER.get(type(value))
    found = maker(value) if maker is not None else []
    return _distinct([v for v in found if _order(v) < _order(value)], value)


def _order(value: Any) -> tuple[int, str]:
    """Shortlex: smaller first, then by encoding (so 0 < 1 < -1, "" < "a")."""
    return plain.size(value), plain.canonical_of(value)


def _ints(value: int) -> list[Any]:
    return [0, 1, -1, int(value / 2), value - (1 if value > 0 else -1)]


def _floats(value: float) -> list[Any]:
    finite = [float(math.trunc(value)), value / 2] if math.isfinite(value) else []
    return [0.0, 1.0, *finite]


def _texts(value: Any) -> list[Any]:
    half = len(value) // 2
    return [value[:0], value[:half], value[half:], value[1:], value[:-1]]


def _tuples(value: tuple[Any, ...]) -> list[Any]:
    return [
        (*value[:n], smaller, *value[n + 1 :])
        for n, item in enumerate(value)
        for smaller in simpler(item)[:1]
    ]


def _dicts(value: dict[Any, Any]) -> list[Any]:
    fewer = [{k: v for k, v in value.items() if k != key} for key in list(value)[:_EACH]]
    return [{}, *fewer]


def _ranges(value: range) -> list[Any]:
    half = value.start + len(value) // 2 * value.step
    return [range(0), range(value.start, half, value.step)]


_SIMPLER: dict[type, Callable[[Any], list[Any]]] = {
    bool: lambda value: [False] if value else [],
    int: _ints,
    float: _floats,
    str: _texts,
    bytes: _texts,
    tuple: _tuples,
    dict: _dicts,
    range: _ranges,
    list: lambda value: _smaller_collections(value),
    set: lambda value: _smaller_collections(value),
    frozenset: lambda value: _smaller_collections(value),
    Items: lambda value: _smaller_collections(value),
}


def _smaller_collections(value: Any) -> list[Any]:
    kind = type(value)
    if kind in (list, Items):
        items = list(value.items if kind is Items else value)
    else:
        items = sorted(value, key=plain.canonical_of)
    half = len(items) // 2
    options = [[], items[:half], items[half:]]
    options += [items[:n] + items[n + 1 :] for n in range(min(len(items), _EACH))]
    for n, item in enumerate(items[:_EACH]):
        options += [[*items[:n], s, *items[n + 1 :]] for s in simpler(item)[:1]]
    made = []
    for option in options:
        try:
            made.append(Items(tuple(option)) if kind is Items else kind(option))
        except TypeError:  # an unhashable simplification of a set member
            continue
    return made


def _distinct(values: list[Any], original: Any) -> list[Any]:
    seen = {plain.canonical_of(original)}
    out = []
    for value in values:
        key = plain.canonical_of(value)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def proposals(patch: Mapping[ParamSlot, Any], limit: int = PER_ROUND) -> list[dict[ParamSlot, Any]]:
    """Patches one step simpler than `patch` (one slot changed each), simplest first."""
    found: list[dict[ParamSlot, Any]] = []
    for slot, value in patch.items():
        found += [{**patch, slot: smaller} for smaller in simpler(value)]
    found.sort(key=lambda p: (sum(plain.size(v) for v in p.values()), plain.canonical(_enc(p))))
    return found[:limit]


def _enc(patch: Mapping[ParamSlot, Any]) -> list[Any]:
    ordered = sorted(patch.items(), key=lambda kv: str(kv[0]))
    return [[str(slot), plain.encode(value)] for slot, value in ordered]


def _decoded(item: CallInput) -> dict[ParamSlot, Any] | None:
    try:
        return {r.slot: plain.decode(r.value) for r in item.replaced}
    except plain.NotPlain:
        return None


def shrink_counterexample(
    task: LoadedTask,
    item: CallInput,
    example: Counterexample,
    spliced: bytes,
    jail: Jail,
    budget_s: float = BUDGET_S,
) -> Counterexample:
    """A simpler counterexample than `example` (on generated `item`), or `example` itself."""
    current = _decoded(item) if item.provenance != "traced" and item.replaced else None
    if not current:
        return example
    deadline = time.monotonic() + budget_s
    best = example
    for _ in range(ROUNDS):
        if time.monotonic() > deadline:
            break
        batch = [with_replacements(item, p, n) for n, p in enumerate(proposals(current))]
        inputs = [b for b in batch if b is not None]
        found = _first_failing(task, inputs, spliced, jail)
        if found is None:
            break
        index, shrunk = found
        current = _decoded(inputs[index]) or {}
        best = shrunk.model_copy(
            update={"index": example.index, "stratum": example.stratum, "shrunk_from": example.call}
        )
    return best


def _first_failing(
    task: LoadedTask,
    inputs: Sequence[CallInput],
    spliced: bytes,
    jail: Jail,
) -> tuple[int, Counterexample] | None:
    if not inputs:
        return None
    settings = task.hidden.grading
    target = task.hidden.target
    with ThreadPoolExecutor(max_workers=2) as pool:
        ref_job = pool.submit(jail.run, target, inputs, settings, encode_inputs=True)
        got_job = pool.submit(jail.run, target, inputs, settings, override=spliced)
        reference: JailRun = result_of(ref_job)
        candidate: JailRun = result_of(got_job)
    if reference.infra_problem() or candidate.infra_problem():
        return None
    for n, item in enumerate(inputs):
        expected = reference.parsed.outcomes.get(item.index)
        if expected is None or expected.get("status") not in ("returned", "raised"):
            continue
        if not is_gradable(expected, settings):
            continue
        mismatch = compare_outcome(expected, candidate.parsed.outcomes.get(item.index), settings)
        if mismatch is not None:
            call = render_call(target, expected)
            return n, counterexample(item.model_copy(update={"call": call}), mismatch)
    return None
