"""Generating widened and edge inputs from traced calls, and the recipes the runner builds."""

from __future__ import annotations

import base64
import pickle
from collections import Counter
from typing import Any

from replicate.core.records import CallInput, CallKind, Span, Target
from replicate.harness.runner import _unpack
from replicate.verifiers import plain
from replicate.verifiers.inputs import (
    RECIPE_TAG,
    Budget,
    Seed,
    recipe_b64,
    recipe_seed,
    widen,
    with_replacements,
)
from replicate.verifiers.render import render
from tests.unit.minted import Tiny


def _target(kind: CallKind = "function", signature: str = "def clamp(value, low, high):") -> Target:
    span = Span(start_byte=0, end_byte=1, start_line=1, end_line=1)
    return Target(
        path="m.py",
        module="m",
        qualname="Box.clamp" if kind == "method" else "clamp",
        kind=kind,
        signature=signature,
        docstring="Clamp.\n\n>>> clamp(7, 1, 3)\n3\n",
        class_name="Box" if kind == "method" else None,
        def_span=span,
        body_span=span,
        body_indent="    ",
        body_statements=1,
    )


class Box:
    """Stands for a repository object: pickled by reference, never encoded as plain."""


def _seed(n: int, args: tuple[Any, ...], nodes: list[Any] | None = None, ok: bool = True) -> Seed:
    blob = base64.b64encode(pickle.dumps((args, {}))).decode()
    encoded = nodes if nodes is not None else [plain.encode(a) for a in args]
    return Seed(CallInput(index=n, origin=f"t::{n}", pickle_b64=blob), tuple(encoded), {}, ok)


SEEDS = [
    _seed(0, (5, 0, 10)),
    _seed(1, (-3, 0, 10)),
    _seed(2, (12, 0, 10)),
    _seed(3, (2.5, 1.0, 2.0)),
]


def _calls(inputs: tuple[CallInput, ...]) -> list[tuple[Any, ...]]:
    out = []
    for item in inputs:
        args, kwargs = _unpack(base64.b64decode(item.pickle_b64))
        assert kwargs == {}
        out.append(args)
    return out


def test_widened_and_edge_inputs_within_budget() -> None:
    made = widen(_target(), SEEDS, 10, Budget(widened=30, edge=20))
    assert made.generatable
    counts = Counter(i.provenance for i in made.inputs)
    assert counts == {"widened": 30, "edge": 20}
    assert [i.index for i in made.inputs] == list(range(10, 60))
    assert all(i.stratum == i.provenance and i.replaced for i in made.inputs)
    assert {i.origin for i in made.inputs} <= {"t::0", "t::1", "t::2", "t::3"}
    calls = _calls(made.inputs)
    traced = {(5, 0, 10), (-3, 0, 10), (12, 0, 10), (2.5, 1.0, 2.0)}
    assert len({repr(c) for c in calls}) == len(calls) and not traced & set(calls)
    assert (7, 1, 3) in calls  # the doctest's call
    assert all(low < high for _, low, high in calls)  # low < high held in every traced call
    assert any(c[0] != c[0] for c in calls)  # NaN: the value slot has no relation to keep


def test_replacements_describe_the_difference_from_the_seed() -> None:
    made = widen(_target(), SEEDS, 10, Budget(widened=20, edge=5))
    for item, call in zip(made.inputs, _calls(made.inputs), strict=True):
        for replacement in item.replaced:
            assert isinstance(replacement.slot, int)
            assert plain.canonical(replacement.value) == plain.canonical(
                plain.encode(call[replacement.slot])
            )


def test_generation_is_deterministic() -> None:
    one = widen(_target(), SEEDS, 10, Budget())
    two = widen(_target(), SEEDS, 10, Budget())
    assert [i.pickle_b64 for i in one.inputs] == [i.pickle_b64 for i in two.inputs]


def test_a_methods_self_is_kept_from_the_seed() -> None:
    me = {"t": "obj", "type": "tests.Box", "fields": {}}
    seeds = [
        _seed(n, (Box(), n, [n, 1]), [me, plain.encode(n), plain.encode([n, 1])]) for n in range(3)
    ]
    made = widen(_target("method", "    def clamp(self, n, items):"), seeds, 3, Budget())
    assert made.inputs
    assert all(r.slot in (1, 2) for i in made.inputs for r in i.replaced)
    assert all(type(call[0]) is Box for call in _calls(made.inputs))


def test_nothing_to_generate_from() -> None:
    me = {"t": "obj", "type": "tests.Box", "fields": {}}
    objects = [_seed(n, (Box(),), [me]) for n in range(3)]
    assert widen(_target(), objects, 3, Budget()).generatable is False
    raising = [_seed(n, (n,), ok=False) for n in range(3)]  # calls made to see an error
    assert widen(_target(), raising, 3, Budget()).inputs == ()


def test_recipes_round_trip_through_the_runner() -> None:
    seed = pickle.dumps(((Box(), 1, "a"), {"k": 2}))
    blob = recipe_b64(seed, {2: {3, 1}}, {"k": plain.Items((4, 5)), "new": None})
    assert recipe_seed(blob) == seed
    args, kwargs = _unpack(base64.b64decode(blob))
    assert type(args[0]) is Box and args[1:] == (1, {1, 3})
    assert list(kwargs["k"]) == [4, 5] and kwargs["new"] is None  # a fresh iterator
    legacy = pickle.dumps(((1,), {}))
    assert _unpack(legacy) == ((1,), {})
    assert recipe_seed(base64.b64encode(legacy).decode()) is None


def test_recipe_bytes_do_not_depend_on_set_order() -> None:
    a = recipe_b64(b"seed", {0: {"x", "y", "zz"}}, {})
    b = recipe_b64(b"seed", {0: {"zz", "y", "x"}}, {})
    assert a == b
    assert pickle.loads(base64.b64decode(a))[0] == RECIPE_TAG


def test_with_replacements_keeps_the_seed() -> None:
    made = widen(_target(), SEEDS, 10, Budget(widened=3, edge=0))
    item = made.inputs[0]
    other = with_replacements(item, {0: 0, 1: -1}, 99)
    assert other is not None and other.index == 99 and other.provenance == item.provenance
    assert recipe_seed(other.pickle_b64) == recipe_seed(item.pickle_b64)
    assert [(r.slot, plain.decode(r.value)) for r in other.replaced] == [(0, 0), (1, -1)]


def test_minted_generated_inputs_run_as_their_recipes_say(tiny: Tiny) -> None:
    task = tiny.task("tinypkg.core.clamp")
    generated = [i for i in task.inputs if i.provenance != "traced"]
    assert len(generated) >= 20
    for item in generated:
        # the call was rendered from what the runner received: the replaced values are there
        shown = [render(r.value, 120) for r in item.replaced]
        assert all(text in item.call for text in shown), (item.call, shown)


def test_boundary_values_stay_edge_cases_when_a_widened_draw_hits_them() -> None:
    target = _target(signature="def double(n):").model_copy(
        update={"qualname": "double", "docstring": None}
    )
    seeds = [_seed(0, (2,)), _seed(1, (3,)), _seed(2, (5,))]
    made = widen(target, seeds, 3, Budget(widened=40, edge=10))
    by_provenance: dict[str, list[Any]] = {"widened": [], "edge": []}
    for item, call in zip(made.inputs, _calls(made.inputs), strict=True):
        by_provenance[item.provenance].append(call[0])
    assert by_provenance["edge"] == [0, 1, -1, 2**31 - 1, -(2**31)]  # one seed per kind of value
    assert not set(by_provenance["edge"]) & set(by_provenance["widened"])
    assert len(by_provenance["widened"]) >= 10
    assert [i.provenance for i in made.inputs][:1] == ["widened"]  # widened are indexed first
