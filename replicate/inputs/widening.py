"""Widened and edge inputs, generated on the trusted side from the traced calls (docs/design.md §3).

A traced call is a pickle recorded in the repository's test run; the trusted side never unpickles
it.  It reads the call's arguments from the runner's tagged encoding (``args_in``), keeps the
argument slots that hold plain values (`replicate.values.plain`), and makes new calls by
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
is only ever loaded inside the jail).  A method's ``self`` is varied through the class call that
built it, when the harvest recorded one: the traced input is then a recipe of
``CTOR_RECIPE_TAG`` carrying that call's pickle too, the runner reports its arguments
(``ctor_in``), their plain ones are slots named ``self.<position or keyword>``, and a recipe that
replaces any of them has the runner build ``self`` afresh as ``type(self)(*args, **kwargs)``.
Pairwise relations that hold in every traced call the reference returned on (``a <= b``,
``len(a) == len(b)``) are kept, so generated calls stay within the preconditions the tests
respect; what the reference does with the rest (hang, blow up, act nondeterministically) is
judged later, by running it (`replicate.gen.golden`).
Deterministic: every random choice comes from a generator seeded with the target's symbol.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from replicate.batch import StoredOutcome
from replicate.core import CallInput, Provenance, Target
from replicate.inputs.iterables import declares_iterable, iterable_patches
from replicate.inputs.mutate import Pool, boundaries, mutate, pool_of
from replicate.inputs.recipes import (
    ctor_slot,
    is_ctor,
    recipe_b64,
    replacements,
    seed_call,
    seed_size,
)
from replicate.inputs.relations import Relation, holds, infer_relations
from replicate.inputs.signature import (
    ParamSlot,
    Signature,
    doctest_calls,
    doctest_literals,
    parse_signature,
)
from replicate.inputs.strategies import Strategy, draw, from_hint, from_shape, observe
from replicate.values import plain, render


@dataclass(frozen=True)
class Budget:
    """How many inputs to generate per task, at most."""

    widened: int = 50
    edge: int = 20
    iterables: int = 6  # sequences passed as iterators, one object in two slots (`iterables`)
    max_seed_bytes: int = 16_384  # larger seeds are not copied into recipes
    # Of each stratum, at most this share runs on a `self` built from a class call: a fresh
    # object is often empty, and a task graded mostly on empty objects rewards `return default`.
    self_share: float = 0.25

    def built_selves(self, limit: int) -> int:
        return int(limit * self.self_share)


@dataclass(frozen=True)
class Seed:
    """A traced input and the runner's encoding of its arguments before the call."""

    item: CallInput
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]
    returned: bool
    ctor_args: tuple[Any, ...] = ()  # the encoded class call that built `self`, when recorded
    ctor_kwargs: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, item: CallInput, outcome: StoredOutcome) -> Seed | None:
        """The seed a reference outcome reported with the arguments (`args_in`) makes, if any."""
        if "args_in" not in outcome:
            return None
        ctor = outcome.get("ctor_in") or {}
        return cls(
            item=item,
            args=tuple(outcome.get("args_in") or ()),
            kwargs=dict(outcome.get("kwargs_in") or {}),
            returned=outcome.get("status") == "returned",
            ctor_args=tuple(ctor.get("args") or ()),
            ctor_kwargs=dict(ctor.get("kwargs") or {}),
        )

    def encoded(self) -> dict[ParamSlot, Any]:
        """Every argument slot's encoding: the call's, then its `self`'s class call's."""
        named: dict[ParamSlot, Any] = dict(enumerate(self.args))
        named.update(self.kwargs)
        named.update({ctor_slot(n): node for n, node in enumerate(self.ctor_args)})
        named.update({ctor_slot(k): node for k, node in self.ctor_kwargs.items()})
        return named


@dataclass(frozen=True)
class _Call:
    seed: Seed
    values: Mapping[ParamSlot, Any]  # the seed's plain slots
    patch: Mapping[ParamSlot, Any]
    provenance: Provenance
    shared: bool = False  # one object in two slots: another call than two equal ones


@dataclass(frozen=True)
class Widening:
    inputs: tuple[CallInput, ...]
    generatable: bool  # some traced call has an argument slot holding a plain value


def task_seed(target: Target, salt: str = "") -> int:
    digest = hashlib.sha256(f"{target.symbol}\x00{salt}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def plain_slots(seed: Seed, kind: str) -> dict[ParamSlot, Any]:
    """The seed's argument slots that hold plain values (never a method's `self` itself)."""
    slots: dict[ParamSlot, Any] = {}
    for slot, node in seed.encoded().items():
        if kind == "method" and slot == 0:
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
    usable = [s for s in seeds if s.returned and seed_size(s.item) <= budget.max_seed_bytes]
    given = [plain_slots(s, target.kind) for s in usable]
    signature = parse_signature(target)
    values = [{**v, **left_out(s, signature)} for s, v in zip(usable, given, strict=True)]
    calls = [(s, v) for s, v in zip(usable, values, strict=True) if v]
    if not calls:
        return Widening((), generatable=False)
    rng = random.Random(task_seed(target, salt))
    relations = infer_relations([v for v in given if v])
    keys = _Keys(signature)
    seen = {keys.of(s, {}) for s in seeds}
    # Boundary values first: a widened draw that happens to hit one does not take it from them.
    picks = _Picks(relations, keys, seen, budget)
    edge = picks.take(_edges(calls, _defaults(signature)), budget.edge)
    widened = picks.take(_widened(target, signature, calls, rng, salt), budget.widened)
    iterables = picks.take(_iterable_calls(calls, signature), budget.iterables)
    made = [_input(call, first_index + n) for n, call in enumerate([*widened, *edge, *iterables])]
    return Widening(tuple(made), generatable=True)


def left_out(seed: Seed, signature: Signature | None) -> dict[ParamSlot, Any]:
    """The parameters with a plain literal default that the seed call leaves out, by keyword,
    at their default: a call that leaves out `maxsplit=-1` is widened over `maxsplit` too (a
    method the tests call only as `text.split()` has no other slot to vary)."""
    if signature is None:
        return {}
    passed = len(seed.args)
    params = [p for n, p in enumerate(signature.positional) if n >= passed and not p.posonly]
    found: dict[ParamSlot, Any] = {}
    for param in (*params, *signature.keyword):
        plain_default, value = param.literal_default()
        if plain_default and param.name not in seed.kwargs:
            found[param.name] = value
    return found


def _encodes(patch: Mapping[ParamSlot, Any]) -> bool:
    try:
        replacements(patch)
    except plain.NotPlain:
        return False
    return True


@dataclass(frozen=True)
class _Picks:
    """Takes generated calls that keep the relations, are new, and keep built selves within
    their share."""

    relations: Sequence[Relation]
    keys: _Keys
    seen: set[str]
    budget: Budget

    def take(self, candidates: Iterator[_Call], limit: int) -> list[_Call]:
        taken: list[_Call] = []
        built, most_built = 0, self.budget.built_selves(limit)
        for call in itertools.islice(candidates, limit * 6):
            if len(taken) >= limit:
                break
            if not call.patch or not _encodes(call.patch):
                continue  # a value without a plain encoding (a complex, say) cannot be recorded
            if not holds(self.relations, {**call.values, **call.patch}):
                continue
            builds = _builds_self(call)
            if builds and built >= most_built:
                continue
            key = self.keys.of(call.seed, call.patch) + ("#shared" if call.shared else "")
            if key not in self.seen:
                self.seen.add(key)
                taken.append(call)
                built += builds
        return taken


def _builds_self(call: _Call) -> bool:
    return seed_call(call.seed.item).build or any(is_ctor(slot) for slot in call.patch)


def _widened(
    target: Target,
    signature: Signature | None,
    calls: Sequence[tuple[Seed, dict[ParamSlot, Any]]],
    rng: random.Random,
    salt: str,
) -> Iterator[_Call]:
    yield from _doctest_calls(target, calls)
    drawn = _drawn(target, signature, calls, salt)
    pool = pool_of([*(v for _, vs in calls for v in vs.values()), *doctest_literals(target)])
    share = Budget().self_share
    for n in itertools.count():
        seed, values = calls[rng.randrange(len(calls))]
        slots = _slots_to_vary(values, rng, share)
        if n % 2 == 0 and drawn:
            patch = _drawn_patch(slots, drawn, rng)
        else:
            patch = _mutant_patch(slots, rng, pool)
        yield _Call(seed, values, patch, "widened")


def _iterable_calls(
    calls: Sequence[tuple[Seed, dict[ParamSlot, Any]]], signature: Signature | None
) -> Iterator[_Call]:
    slots = {slot for _, values in calls for slot in values if not is_ctor(slot)}
    declared = {s for s in slots if signature and declares_iterable(signature.parameter(s))}
    for found in iterable_patches([values for _, values in calls], declared):
        seed, values = calls[found.at]
        yield _Call(seed, values, found.patch, "widened", shared=found.shared)


def _slots_to_vary(
    values: Mapping[ParamSlot, Any], rng: random.Random, share: float
) -> dict[ParamSlot, Any]:
    """The call's own slots, or (at the share built selves have) its `self`'s class call's."""
    ctor = {slot: v for slot, v in values.items() if is_ctor(slot)}
    if not ctor:
        return dict(values)
    call = {slot: v for slot, v in values.items() if not is_ctor(slot)}
    return ctor if not call or rng.random() < share else call


def _drawn(
    target: Target,
    signature: Signature | None,
    calls: Sequence[tuple[Seed, dict[ParamSlot, Any]]],
    salt: str,
) -> dict[ParamSlot, list[Any]]:
    """Per slot, values hypothesis drew from the slot's observed shape (and type hint)."""
    slots = sorted({slot for _, values in calls for slot in values}, key=str)
    drawn: dict[ParamSlot, list[Any]] = {}
    for slot in slots:
        observed = [values[slot] for _, values in calls if slot in values]
        strategy = from_shape(observe(observed))
        param = signature.parameter(slot) if signature and not is_ctor(slot) else None
        hinted = from_hint(param.annotation) if param else None
        if strategy is None and hinted is None:
            continue
        parts: list[Strategy] = [s for s in (strategy, hinted) if s is not None]
        merged = parts[0] if len(parts) == 1 else parts[0] | parts[1]
        drawn[slot] = draw(merged, 30, task_seed(target, salt + str(slot)))
    return drawn


def _drawn_patch(
    values: Mapping[ParamSlot, Any], drawn: Mapping[ParamSlot, list[Any]], rng: random.Random
) -> dict[ParamSlot, Any]:
    slots = [slot for slot in values if drawn.get(slot)]
    if not slots:
        return {}
    chosen = slots if rng.random() < 0.5 else [rng.choice(slots)]
    return {slot: rng.choice(drawn[slot]) for slot in chosen}


def _mutant_patch(
    values: Mapping[ParamSlot, Any], rng: random.Random, pool: Pool
) -> dict[ParamSlot, Any]:
    slot = rng.choice(list(values))
    value = values[slot]
    for _ in range(rng.randint(1, 2)):
        value = mutate(value, rng, pool)
    return {slot: value}


def _doctest_calls(
    target: Target, calls: Sequence[tuple[Seed, dict[ParamSlot, Any]]]
) -> Iterator[_Call]:
    offset = 1 if target.kind == "method" else 0
    for doc in doctest_calls(target):
        patch: dict[ParamSlot, Any] = {offset + n: v for n, v in enumerate(doc.args)}
        patch.update(dict(doc.kwargs))
        for seed, values in calls:
            fits = len(seed.args) == offset + len(doc.args) and set(seed.kwargs) == set(
                dict(doc.kwargs)
            )
            if fits and set(patch) <= set(values):
                yield _Call(seed, values, patch, "widened")
                break


def _defaults(signature: Signature | None) -> dict[ParamSlot, Any]:
    """The plain literal defaults of the target's parameters, by slot (position and name)."""
    if signature is None:
        return {}
    found: dict[ParamSlot, Any] = {}
    for slot, param in [*enumerate(signature.positional), *((None, p) for p in signature.keyword)]:
        plain_default, value = param.literal_default()
        if plain_default:
            found[param.name] = value
            if slot is not None:
                found[slot] = value
    return found


def _edges(
    calls: Sequence[tuple[Seed, dict[ParamSlot, Any]]], defaults: Mapping[ParamSlot, Any]
) -> Iterator[_Call]:
    """Boundary values, one slot at a time, spread over slots and seeds; first in each slot,
    the parameter's default when no call passed it (None for `n=None`, say: often a path of
    its own that the tests always pass a value past)."""
    per_slot: dict[ParamSlot, list[tuple[Seed, dict[ParamSlot, Any], Any]]] = {}
    for seed, values in calls:
        for slot, value in values.items():
            per_slot.setdefault(slot, []).append((seed, values, value))
    queues = []
    for slot in sorted(per_slot, key=str):
        owners = per_slot[slot]
        kinds: dict[str, tuple[Seed, dict[ParamSlot, Any], Any]] = {}
        for owner in owners:  # one seed per kind of value seen in the slot
            kinds.setdefault(type(owner[2]).__name__, owner)
        queue = [(slot, owner, edge) for owner in kinds.values() for edge in boundaries(owner[2])]
        seen = {plain.canonical_of(owner[2]) for owner in owners}
        default = {slot: defaults[slot]} if slot in defaults else {}
        if default and _encodes(default) and plain.canonical_of(defaults[slot]) not in seen:
            queue.insert(0, (slot, owners[0], defaults[slot]))
        queues.append(queue)
    for row in itertools.zip_longest(*queues):
        for entry in row:
            if entry is not None:
                slot, (seed, values, _), edge = entry
                yield _Call(seed, values, {slot: edge}, "edge")


class _Keys:
    """A call's identity: the canonical encoding of its arguments, a parameter it leaves out at
    its default (`left_out`) the same as passing the default.  A seed's own arguments are
    canonicalised once, not per generated call (a method's `self` can be a large structure)."""

    def __init__(self, signature: Signature | None = None) -> None:
        self.seeds: dict[int, tuple[Seed, dict[ParamSlot, str]]] = {}
        self.signature = signature

    def of(self, seed: Seed, patch: Mapping[ParamSlot, Any]) -> str:
        entry = self.seeds.get(id(seed))
        if entry is None or entry[0] is not seed:
            base = {slot: plain.canonical(n) for slot, n in seed.encoded().items()}
            defaults = left_out(seed, self.signature).items()
            base.update({slot: plain.canonical_of(v) for slot, v in defaults})
            entry = (seed, base)
            self.seeds[id(seed)] = entry
        base = entry[1]
        named = {
            str(slot): plain.canonical_of(patch[slot]) if slot in patch else c
            for slot, c in base.items()
        }
        return json.dumps(sorted(named.items()))


def _input(call: _Call, index: int) -> CallInput:
    seed = seed_call(call.seed.item)
    built = _builds_self(call)  # the class call rides along only when `self` is built from it
    return CallInput(
        index=index,
        stratum=call.provenance,
        provenance=call.provenance,
        origin=call.seed.item.origin,
        pickle_b64=recipe_b64(seed.call, call.patch, seed.ctor if built else None, built),
        replaced=replacements(call.patch),
        visible=False,
    )


def render_call(target: Target, outcome: StoredOutcome) -> str:
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
