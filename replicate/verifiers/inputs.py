"""Widened and edge inputs, generated on the trusted side from the traced calls (BRIEF §2, §4).

A traced call is a pickle recorded in the repository's test run; the trusted side never unpickles
it.  It reads the call's arguments from the runner's tagged encoding (``args_in``), keeps the
argument slots that hold plain values (`replicate.verifiers.plain`), and makes new calls by
replacing some of those slots (seeds are the traced calls the reference returned on: a call the
tests make to see an error is no model of a valid one):

- widened: values drawn by hypothesis from the observed shapes of each slot (and from builtin
  type hints in the signature), type-aware mutants of the traced values (EvalPlus style, with an
  ingredient pool of every leaf value seen), and the literal calls of the doctest examples;
- edge: one slot at a time set to a boundary value of its type (empty, 0, -1, large, unicode,
  NaN, ±inf, -0.0).

Arguments that are not plain (a ``self``, a callable, a repository object) stay as they were in
the seed call: a generated input is a *recipe*, the pickle of ``(RECIPE_TAG, seed pickle bytes,
{position: value}, {keyword: value})``, which the runner turns into the call (the seed's pickle
is only ever loaded inside the jail).  Pairwise relations that hold in every traced call the
reference returned on (``a <= b``, ``len(a) == len(b)``) are kept, so generated calls stay within
the preconditions the tests respect; what the reference does with the rest (hang, blow up, act
nondeterministically) is judged later, by running it (`replicate.gen.golden`).
Deterministic: every random choice comes from a generator seeded with the target's symbol.
"""

from __future__ import annotations

import base64
import hashlib
import io
import itertools
import json
import pickle
import pickletools
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replicate.core.records import CallInput, Provenance, Replacement, Target
from replicate.verifiers import plain
from replicate.verifiers.compare import render
from replicate.verifiers.mutate import Pool, boundaries, mutate, pool_of
from replicate.verifiers.relations import Relation, holds, infer_relations
from replicate.verifiers.signature import Slot, doctest_calls, doctest_literals, parse_signature
from replicate.verifiers.strategies import Strategy, draw, from_hint, from_shape, observe

RECIPE_TAG = "replicate-recipe/1"


@dataclass(frozen=True)
class Budget:
    """How many inputs to generate per task, at most."""

    widened: int = 50
    edge: int = 20
    max_seed_bytes: int = 16_384  # larger seeds are not copied into recipes


@dataclass(frozen=True)
class Seed:
    """A traced input and the runner's encoding of its arguments before the call."""

    item: CallInput
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]
    returned: bool


@dataclass(frozen=True)
class _Call:
    seed: Seed
    values: Mapping[Slot, Any]  # the seed's plain slots
    patch: Mapping[Slot, Any]
    provenance: Provenance


@dataclass(frozen=True)
class Widening:
    inputs: tuple[CallInput, ...]
    generatable: bool  # some traced call has an argument slot holding a plain value


def task_seed(target: Target, salt: str = "") -> int:
    digest = hashlib.sha256(f"{target.symbol}\x00{salt}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def plain_slots(seed: Seed, kind: str) -> dict[Slot, Any]:
    """The seed's argument slots that hold plain values (never a method's `self`)."""
    slots: dict[Slot, Any] = {}
    first = 1 if kind == "method" else 0
    named: list[tuple[Slot, Any]] = [*enumerate(seed.args), *seed.kwargs.items()]
    for slot, node in named:
        if isinstance(slot, int) and slot < first:
            continue
        ok, value = plain.try_decode(node)
        if ok:
            slots[slot] = value
    return slots


def widen(
    target: Target, seeds: Sequence[Seed], first_index: int, budget: Budget, salt: str = ""
) -> Widening:
    """Generated inputs for `target`, indexed from `first_index` (widened first, then edge);
    another `salt` draws other inputs from the same seeds (the strength check's search)."""
    usable = [s for s in seeds if s.returned and len(_blob(s.item)) <= budget.max_seed_bytes]
    values = [plain_slots(s, target.kind) for s in usable]
    calls = [(s, v) for s, v in zip(usable, values, strict=True) if v]
    if not calls:
        return Widening((), generatable=False)
    rng = random.Random(task_seed(target, salt))
    relations = infer_relations([v for _, v in calls])
    keys = _Keys()
    seen = {keys.of(s, {}) for s in seeds}
    # Boundary values first: a widened draw that happens to hit one does not take it from them.
    edge = _take(_edges(calls), budget.edge, relations, keys, seen)
    widened = _take(_widened(target, calls, rng, salt), budget.widened, relations, keys, seen)
    made = [_input(call, first_index + n) for n, call in enumerate([*widened, *edge])]
    return Widening(tuple(made), generatable=True)


def _take(
    candidates: Iterator[_Call],
    limit: int,
    relations: Sequence[Relation],
    keys: _Keys,
    seen: set[str],
) -> list[_Call]:
    taken: list[_Call] = []
    for call in itertools.islice(candidates, limit * 6):
        if len(taken) >= limit:
            break
        if not call.patch or not holds(relations, {**call.values, **call.patch}):
            continue
        key = keys.of(call.seed, call.patch)
        if key not in seen:
            seen.add(key)
            taken.append(call)
    return taken


def _widened(
    target: Target, calls: Sequence[tuple[Seed, dict[Slot, Any]]], rng: random.Random, salt: str
) -> Iterator[_Call]:
    yield from _doctest_calls(target, calls)
    drawn = _drawn(target, calls, salt)
    pool = pool_of([*(v for _, vs in calls for v in vs.values()), *doctest_literals(target)])
    for n in itertools.count():
        seed, values = calls[rng.randrange(len(calls))]
        if n % 2 == 0 and drawn:
            patch = _drawn_patch(values, drawn, rng)
        else:
            patch = _mutant_patch(values, rng, pool)
        yield _Call(seed, values, patch, "widened")


def _drawn(
    target: Target, calls: Sequence[tuple[Seed, dict[Slot, Any]]], salt: str
) -> dict[Slot, list[Any]]:
    """Per slot, values hypothesis drew from the slot's observed shape (and type hint)."""
    signature = parse_signature(target)
    slots = sorted({slot for _, values in calls for slot in values}, key=str)
    drawn: dict[Slot, list[Any]] = {}
    for slot in slots:
        observed = [values[slot] for _, values in calls if slot in values]
        strategy = from_shape(observe(observed))
        param = signature.parameter(slot) if signature else None
        hinted = from_hint(param.annotation) if param else None
        if strategy is None and hinted is None:
            continue
        parts: list[Strategy] = [s for s in (strategy, hinted) if s is not None]
        merged = parts[0] if len(parts) == 1 else parts[0] | parts[1]
        drawn[slot] = draw(merged, 30, task_seed(target, salt + str(slot)))
    return drawn


def _drawn_patch(
    values: Mapping[Slot, Any], drawn: Mapping[Slot, list[Any]], rng: random.Random
) -> dict[Slot, Any]:
    slots = [slot for slot in values if drawn.get(slot)]
    if not slots:
        return {}
    chosen = slots if rng.random() < 0.5 else [rng.choice(slots)]
    return {slot: rng.choice(drawn[slot]) for slot in chosen}


def _mutant_patch(values: Mapping[Slot, Any], rng: random.Random, pool: Pool) -> dict[Slot, Any]:
    slot = rng.choice(list(values))
    value = values[slot]
    for _ in range(rng.randint(1, 2)):
        value = mutate(value, rng, pool)
    return {slot: value}


def _doctest_calls(
    target: Target, calls: Sequence[tuple[Seed, dict[Slot, Any]]]
) -> Iterator[_Call]:
    offset = 1 if target.kind == "method" else 0
    for doc in doctest_calls(target):
        patch: dict[Slot, Any] = {offset + n: v for n, v in enumerate(doc.args)}
        patch.update(dict(doc.kwargs))
        for seed, values in calls:
            fits = len(seed.args) == offset + len(doc.args) and set(seed.kwargs) == set(
                dict(doc.kwargs)
            )
            if fits and set(patch) <= set(values):
                yield _Call(seed, values, patch, "widened")
                break


def _edges(calls: Sequence[tuple[Seed, dict[Slot, Any]]]) -> Iterator[_Call]:
    """Boundary values, one slot at a time, spread over slots and seeds."""
    per_slot: dict[Slot, list[tuple[Seed, dict[Slot, Any], Any]]] = {}
    for seed, values in calls:
        for slot, value in values.items():
            per_slot.setdefault(slot, []).append((seed, values, value))
    queues = []
    for slot in sorted(per_slot, key=str):
        owners = per_slot[slot]
        kinds: dict[str, tuple[Seed, dict[Slot, Any], Any]] = {}
        for owner in owners:  # one seed per kind of value seen in the slot
            kinds.setdefault(type(owner[2]).__name__, owner)
        queues.append(
            [(slot, owner, edge) for owner in kinds.values() for edge in boundaries(owner[2])]
        )
    for row in itertools.zip_longest(*queues):
        for entry in row:
            if entry is not None:
                slot, (seed, values, _), edge = entry
                yield _Call(seed, values, {slot: edge}, "edge")


class _Keys:
    """A call's identity: the canonical encoding of its arguments.  A seed's own arguments are
    canonicalised once, not per generated call (a method's `self` can be a large structure)."""

    def __init__(self) -> None:
        self.seeds: dict[int, tuple[Seed, list[str], dict[str, str]]] = {}

    def of(self, seed: Seed, patch: Mapping[Slot, Any]) -> str:
        entry = self.seeds.get(id(seed))
        if entry is None or entry[0] is not seed:
            args = [plain.canonical(node) for node in seed.args]
            entry = (seed, args, {k: plain.canonical(v) for k, v in seed.kwargs.items()})
            self.seeds[id(seed)] = entry
        _, base_args, base_kwargs = entry
        args = [plain.canonical_of(patch[n]) if n in patch else c for n, c in enumerate(base_args)]
        kwargs = {
            k: plain.canonical_of(patch[k]) if k in patch else c for k, c in base_kwargs.items()
        }
        return json.dumps([args, sorted(kwargs.items())])


def _input(call: _Call, index: int) -> CallInput:
    args = {slot: v for slot, v in call.patch.items() if isinstance(slot, int)}
    kwargs = {slot: v for slot, v in call.patch.items() if isinstance(slot, str)}
    return CallInput(
        index=index,
        stratum=call.provenance,
        provenance=call.provenance,
        origin=call.seed.item.origin,
        pickle_b64=recipe_b64(_blob(call.seed.item), args, kwargs),
        replaced=tuple(
            Replacement(slot=slot, value=plain.encode(v))
            for slot, v in sorted(call.patch.items(), key=lambda kv: str(kv[0]))
        ),
    )


# ---------------------------------------------------------------- recipes


def _blob(item: CallInput) -> bytes:
    return base64.b64decode(item.pickle_b64)


class _Pickler(pickle.Pickler):
    """Plain values only; sets in a fixed order (the bytes do not depend on the hash seed) and
    iterator arguments as fresh list iterators."""

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        if kind in (set, frozenset):
            return kind, (sorted(obj, key=plain.canonical_of),)
        if kind is plain.Items:
            return iter, (list(obj.items),)
        return NotImplemented


def recipe_b64(seed: bytes, args: Mapping[int, Any], kwargs: Mapping[str, Any]) -> str:
    """The pickled recipe the runner turns into a call: the seed call with slots replaced."""
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=4).dump((RECIPE_TAG, seed, dict(args), dict(kwargs)))
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def recipe_seed(pickle_b64: str) -> bytes | None:
    """The seed pickle inside a recipe, read from the opcodes (nothing is unpickled)."""
    try:
        ops = pickletools.genops(base64.b64decode(pickle_b64))
        texts = [arg for op, arg, _ in itertools.islice(ops, 12) if op.name != "MEMOIZE"]
    except (ValueError, TypeError):
        return None
    for n, arg in enumerate(texts):
        if arg == RECIPE_TAG:
            found = next((a for a in texts[n + 1 :] if isinstance(a, bytes)), None)
            return found
    return None


def with_replacements(item: CallInput, patch: Mapping[Slot, Any], index: int) -> CallInput | None:
    """A copy of a generated input with other plain values in the same slots (for shrinking)."""
    seed = recipe_seed(item.pickle_b64)
    if seed is None:
        return None
    args = {slot: v for slot, v in patch.items() if isinstance(slot, int)}
    kwargs = {slot: v for slot, v in patch.items() if isinstance(slot, str)}
    replaced = tuple(
        Replacement(slot=slot, value=plain.encode(v))
        for slot, v in sorted(patch.items(), key=lambda kv: str(kv[0]))
    )
    return item.model_copy(
        update={
            "index": index,
            "pickle_b64": recipe_b64(seed, args, kwargs),
            "replaced": replaced,
            "call": "",
        }
    )


def render_call(target: Target, outcome: Mapping[str, Any]) -> str:
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
