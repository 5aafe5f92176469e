"""Widened call sequences: new sequences on a class, generated from its recorded ones (pure).

The rules are the recorded steps: each recorded class call and method call, by name, is a
*template* (its pickle, never unpickled here, and the plain values of its argument slots, read
from the runner's encoding of the reference's replay, `Replay.arguments`).  A widened sequence
is a class call, then up to `StatefulBudget.max_steps - 1` method calls, each a template of a
recorded method whose plain slots are kept or replaced by a value drawn from that method's
slot strategy: `strategies.from_shape` of the values the slot took in every recording (ranges
and lengths widened), the observed values themselves, and for slices, slices of the observed
bounds.  A step is a recipe (`recipes.recipe_b64`: the recorded pickle with slots replaced),
which the runner's replay turns into the call; a name the recordings never called is never a
rule, and an argument that is not plain (a callable, a repository object) stays as recorded.
Bundles: where a recorded step was fed an earlier step's very result (`Step.refs`), its
template is fed the result of an earlier step of the same name in the new sequence (one drawn
among them; the instance for the class call's), or, when none comes before it, the recorded
copy of that argument.

Why a strategy of whole sequences rather than a `RuleBasedStateMachine`: the state machine runs
its rules in this process, but a sequence's outcomes come only from the reference replayed in
the jail, in one run for all of them; a strategy draws the same things (the rule, then its
arguments, step by step) without running anything, and `strategies.draw` makes it
reproducible (seeded, derandomised, no database).  What fails is shrunk as any sequence's
counterexample is: its shortest failing prefix (`grading.failing_prefix`).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from replicate.core import (
    CONSTRUCT,
    MAX_SEQUENCE_STEPS,
    CallSequence,
    Ending,
    Step,
    StepOutcome,
)
from replicate.inputs.recipes import recipe_b64
from replicate.inputs.signature import ParamSlot
from replicate.inputs.strategies import Strategy, draw, from_shape, observe
from replicate.values import plain

WIDENED_ORIGIN = "widened"


@dataclass(frozen=True)
class StatefulBudget:
    """How many widened sequences to draw per class, and how long each is at most (its class
    call included)."""

    sequences: int = 20
    max_steps: int = 20


@dataclass(frozen=True)
class Template:
    """One recorded step a rule can repeat: its pickle and its plain argument slots."""

    name: str
    args_b64: str
    values: Mapping[ParamSlot, Any]
    feeds: tuple[
        tuple[ParamSlot, str], ...
    ] = ()  # (slot, the name of the step whose result it was)


@dataclass(frozen=True)
class Drawn:
    """One drawn step: a template's name and pickle, the plain slots replaced, and per fed slot
    the name of the step whose result it takes and a number that picks one of them."""

    name: str
    args_b64: str
    patch: Mapping[ParamSlot, Any]
    feeds: tuple[tuple[ParamSlot, str, int], ...]


@dataclass(frozen=True)
class Rules:
    """Per recorded name (the class call's is `CONSTRUCT`), its templates; per name and slot,
    the strategy of that slot's values."""

    templates: Mapping[str, tuple[Template, ...]]
    slots: Mapping[tuple[str, ParamSlot], Strategy]

    @property
    def methods(self) -> tuple[str, ...]:
        return tuple(sorted(name for name in self.templates if name != CONSTRUCT))


def rules_of(recorded: Sequence[CallSequence], arguments: Sequence[Sequence[Any]]) -> Rules:
    """The rules the recorded sequences give, `arguments` holding each one's tagged ``(args,
    kwargs)`` per step (a step without them keeps its recorded arguments whole)."""
    found: dict[str, dict[tuple[str, Any], Template]] = {}
    for sequence, shown in zip(recorded, arguments, strict=True):
        for n, step in enumerate(sequence.steps):
            feeds = tuple((slot, sequence.steps[m].name) for slot, m in step.refs)
            fed = {slot for slot, _ in feeds}
            values = slot_values(shown[n]) if n < len(shown) else {}
            plain_values = {k: v for k, v in values.items() if k not in fed}
            found.setdefault(step.name, {}).setdefault(
                (step.args_b64, feeds), Template(step.name, step.args_b64, plain_values, feeds)
            )
    templates = {name: tuple(by_blob.values()) for name, by_blob in found.items()}
    slots: dict[tuple[str, ParamSlot], Strategy] = {}
    for name, group in templates.items():
        for slot in sorted({s for t in group for s in t.values}, key=str):
            observed = [t.values[slot] for t in group if slot in t.values]
            slots[(name, slot)] = slot_strategy(observed)
    return Rules(templates, slots)


def slot_values(node: Any) -> dict[ParamSlot, Any]:
    """The plain argument slots of one step's tagged ``(args, kwargs)``: positions and names."""
    if not isinstance(node, Mapping) or node.get("t") != "tuple" or len(node.get("v", ())) != 2:
        return {}
    args, kwargs = node["v"]
    found: dict[ParamSlot, Any] = {}
    pairs: list[tuple[ParamSlot, Any]] = [*enumerate(args.get("v") or ()), *_keyword_nodes(kwargs)]
    for slot, item in pairs:
        ok, value = plain.try_decode(item)
        if ok:
            found[slot] = value
    return found


def _keyword_nodes(node: Any) -> list[tuple[str, Any]]:
    pairs = node.get("v") if isinstance(node, Mapping) and node.get("t") == "dict" else None
    found = []
    for pair in pairs or ():
        ok, key = plain.try_decode(pair[0])
        if ok and isinstance(key, str):
            found.append((key, pair[1]))
    return found


def slot_strategy(observed: Sequence[Any]) -> Strategy:
    """Values like those a slot took: widened from their shape, the values themselves, and
    slices of their bounds."""
    distinct = {plain.canonical_of(v): v for v in observed}
    seen = [distinct[key] for key in sorted(distinct)]
    parts: list[Strategy] = [st.sampled_from(seen)]
    shaped = from_shape(observe(observed))
    if shaped is not None:
        parts.append(shaped)
    cuts = [v for v in observed if type(v) is slice]
    if cuts:
        parts.append(_slices(cuts))
    return st.one_of(*parts)


def _slices(cuts: Sequence[slice]) -> Strategy:
    bounds = [b for c in cuts for b in (c.start, c.stop) if isinstance(b, int)]
    low, high = min([*bounds, -3]) - 2, max([*bounds, 3]) + 2
    bound = st.none() | st.integers(low, high)
    step = st.none() | st.integers(-3, 3).filter(bool)
    return st.builds(slice, bound, bound, step)


def _step(rules: Rules, name: str) -> Strategy:
    """One step of `name`: a template, some of its slots replaced."""
    group = rules.templates[name]

    @st.composite
    def made(draw_one: Any) -> Drawn:
        template = group[draw_one(st.integers(0, len(group) - 1))]
        patch: dict[ParamSlot, Any] = {}
        for slot in sorted(template.values, key=str):
            if draw_one(st.booleans()):
                patch[slot] = draw_one(rules.slots[(name, slot)])
        feeds = tuple((slot, by, draw_one(st.integers(0, 255))) for slot, by in template.feeds)
        return Drawn(name, template.args_b64, patch, feeds)

    return made()


def sequence_strategy(rules: Rules, max_steps: int) -> Strategy | None:
    """Whole sequences: a recorded class call, then 1 to `max_steps - 1` recorded methods;
    None when there is no such sequence (no method recorded)."""
    if CONSTRUCT not in rules.templates or not rules.methods or max_steps < 2:
        return None
    each = {name: _step(rules, name) for name in rules.methods}
    method = st.sampled_from(rules.methods).flatmap(each.__getitem__)
    rest = st.lists(method, min_size=1, max_size=max_steps - 1)
    return st.tuples(_step(rules, CONSTRUCT), rest).map(lambda pair: (pair[0], *pair[1]))


def widen_sequences(
    recorded: Sequence[CallSequence],
    arguments: Sequence[Sequence[Any]],
    budget: StatefulBudget,
    seed: int,
) -> tuple[CallSequence, ...]:
    """At most `budget.sequences` new sequences on the recorded class, each different from the
    others and from every recorded one, the same ones for the same `seed`."""
    if not recorded:
        return ()
    longest = min(budget.max_steps, MAX_SEQUENCE_STEPS)
    strategy = sequence_strategy(rules_of(recorded, arguments), longest)
    if strategy is None:
        return ()
    drawn = draw(strategy, budget.sequences * 2, seed)
    seen = {_identity((s.name, s.args_b64) for s in sequence.steps) for sequence in recorded}
    made: list[CallSequence] = []
    for choice in drawn:
        steps = _made_steps(choice)
        key = _identity((s.name, s.args_b64) for s in steps)
        if key in seen or len(made) >= budget.sequences:
            continue
        seen.add(key)
        made.append(
            CallSequence(
                cls=recorded[0].cls,
                origin=WIDENED_ORIGIN,
                visible=False,
                ending=Ending.WIDENED,
                steps=steps,
            )
        )
    return tuple(made)


def _made_steps(choice: Sequence[Drawn]) -> tuple[Step, ...]:
    """The drawn steps, each fed the results of earlier steps of the names its template's were."""
    steps: list[Step] = []
    for n, one in enumerate(choice):
        refs = []
        for slot, by, pick in one.feeds:
            earlier = [m for m in range(n) if choice[m].name == by]
            if earlier:
                refs.append((slot, earlier[pick % len(earlier)]))
        patch = one.patch
        blob = recipe_b64(base64.b64decode(one.args_b64), patch) if patch else one.args_b64
        steps.append(
            Step(name=one.name, args_b64=blob, outcome=StepOutcome.UNRECORDED, refs=tuple(refs))
        )
    return tuple(steps)


def _identity(steps: Any) -> bytes:
    return hashlib.sha256(repr(list(steps)).encode()).digest()
