"""Calls cut down to size: from a call whose reference outcome is too large for a generated input
(the parse of a long statement, every line of a long text), calls with one of its sized plain
arguments, the largest, cut to its first half, quarter and eighth (a string, bytes, a list, a
tuple, a dict, an iterator's items; one of the class call's that built a method's `self`, which
is then built afresh). Those whose outcome fits are generated inputs like any other; the call
they were cut from stays what it was (a traced call is kept as traced, a generated one dropped).

Pure: the call's arguments as the runner reported them before the call in, recipes out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from replicate.core import CallInput
from replicate.inputs.recipes import is_ctor, recipe_b64, replacements, seed_call
from replicate.inputs.signature import ParamSlot
from replicate.inputs.widening import Seed, plain_slots
from replicate.values import Items

ROUNDS = 3  # a half, a quarter, an eighth
_CUT = (str, bytes, list, tuple)


def cut_down(
    kind: str, calls: Sequence[tuple[CallInput, Mapping[str, Any]]], first_index: int, limit: int
) -> list[CallInput]:
    """Up to `limit` calls cut from `calls` (each input with its first outcome, which reports
    its arguments), indexed from `first_index`; `kind`: the target's."""
    made: list[CallInput] = []
    for item, outcome in calls:
        seed = Seed.of(item, outcome)
        if seed is None:
            continue
        for patch in _patches(item, plain_slots(seed, kind), seed_call(item).ctor is not None):
            if len(made) >= limit:
                return made
            made.append(_input(item, patch, first_index + len(made)))
    return made


def _patches(
    item: CallInput, values: Mapping[ParamSlot, Any], has_ctor: bool
) -> list[dict[ParamSlot, Any]]:
    """The patches of one call, a round each: its largest sized slot cut (the others, a
    separator or a flag, as they were), the slots it replaced itself kept."""
    slots = {s: v for s, v in values.items() if has_ctor or not is_ctor(s)}
    sized = [s for s in slots if _cut(slots[s], 1) is not None]
    if not sized:
        return []
    largest = max(sized, key=lambda s: _size(slots[s]))
    own = {r.slot: slots[r.slot] for r in item.replaced if r.slot in slots}
    cuts = (_cut(slots[largest], rounds) for rounds in range(1, ROUNDS + 1))
    return [{**own, largest: cut} for cut in cuts if cut is not None]


def _size(value: Any) -> int:
    return len(value.items) if type(value) is Items else len(value)


def _cut(value: Any, rounds: int) -> Any:
    """`value`'s first 1/2**rounds, or None: not sized, or too short to cut that far."""
    if type(value) is Items:
        cut = _cut(value.items, rounds)
        return None if cut is None else Items(cut)
    if type(value) in _CUT or type(value) is dict:
        keep = len(value) >> rounds
        if keep < 1 or keep == len(value):
            return None
        if type(value) is dict:
            return dict(list(value.items())[:keep])
        return value[:keep]
    return None


def _input(item: CallInput, patch: Mapping[ParamSlot, Any], index: int) -> CallInput:
    parts = seed_call(item)
    build = parts.build or any(is_ctor(slot) for slot in patch)
    return CallInput(
        index=index,
        stratum="widened",
        provenance="widened",
        origin=item.origin,
        pickle_b64=recipe_b64(parts.call, patch, parts.ctor, build),
        replaced=replacements(patch),
        visible=False,
    )
