"""Traced method calls run on another `self`: one built from another recorded class call of its
class.  They are generated inputs, and seeds of the widening as well (`replicate.inputs.widening`:
the runner reports their class call's arguments, whose plain ones it varies)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from replicate.core import CallInput
from replicate.inputs.recipes import recipe_b64, seed_call


def seeds_among(inputs: Sequence[CallInput]) -> list[CallInput]:
    """The inputs to generate from: the traced calls, and those traced calls run on a `self`
    built from another class call (`other_selves`)."""
    return [i for i in inputs if i.provenance == "traced" or _other_self(i)]


def _other_self(item: CallInput) -> bool:
    return not item.replaced and seed_call(item).build


def other_selves(
    traced: Sequence[CallInput], ctors: Sequence[bytes], first_index: int, limit: int
) -> tuple[CallInput, ...]:
    """Traced method calls made on a `self` built from another recorded class call of its class
    (`ctors`, pickled `(args, kwargs)`): each class call once with a different traced call
    first, then again round the traced calls, up to `limit`.  They are generated inputs, and
    seeds for the widening as well (the runner reports their class call's arguments)."""
    own = [(item, seed_call(item)) for item in traced]
    own = [(item, parts) for item, parts in own if parts.ctor is not None]
    made: list[CallInput] = []
    for turn, n in itertools.product(range(len(own)), range(len(ctors))):
        item, parts = own[(n + turn) % len(own)]
        if len(made) >= limit:
            break
        if ctors[n] == parts.ctor:
            continue
        made.append(
            CallInput(
                index=first_index + len(made),
                stratum="widened",
                provenance="widened",
                origin=item.origin,
                visible=False,
                pickle_b64=recipe_b64(parts.call, {}, ctors[n], build=True),
            )
        )
    return tuple(made)
