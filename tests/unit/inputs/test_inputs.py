"""Generating widened and edge inputs from traced calls, and the recipes the runner builds."""

from __future__ import annotations

import base64
import pickle
from collections import Counter
from typing import Any

import pytest

from replicate.core.records import CallInput, CallKind, Target
from replicate.gen.target import MIN_SPARSE_GENERATED, SPARSE_SELF_SHARE
from replicate.inputs import widening as inputs
from replicate.inputs.recipes import recipe_b64, replacements, seed_call
from replicate.inputs.widening import Budget, Seed, widen
from replicate.jail.runner.calling import _unpack
from replicate.values import plain
from tests.targets import made_target


def _target(kind: CallKind = "function", signature: str = "def clamp(value, low, high):") -> Target:
    method = kind == "method"
    return made_target(
        "Box.clamp" if method else "clamp",
        kind,
        signature,
        docstring="Clamp.\n\n>>> clamp(7, 1, 3)\n3\n",
        class_name="Box" if method else None,
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


class Bag:
    """A repository class whose instances the harvest saw being built: `Bag(items, cap=...)`."""

    def __init__(self, items: list[int], cap: int = 3) -> None:
        self.items, self.cap = sorted(items)[:cap], cap


def _method_seed(n: int, items: list[int], cap: int) -> Seed:
    me = Bag(items, cap=cap)
    call = pickle.dumps(((me, n), {}))
    ctor = pickle.dumps(((items,), {"cap": cap}))
    item = CallInput(index=n, origin=f"t::{n}", pickle_b64=recipe_b64(call, {}, ctor))
    enc = {"t": "obj", "type": "tests.Bag", "fields": {}}
    ctor_args, ctor_kwargs = (plain.encode(items),), {"cap": plain.encode(cap)}
    return Seed(item, (enc, plain.encode(n)), {}, True, ctor_args, ctor_kwargs)


def test_a_methods_self_is_varied_through_the_class_call_that_built_it() -> None:
    seeds = [_method_seed(n, [n, 5, 1], 3) for n in range(3)]
    made = widen(_target("method", "    def clamp(self, n):"), seeds, 3, Budget())
    slots = Counter(str(r.slot) for i in made.inputs for r in i.replaced)
    assert slots["self.0"] > 5 and slots["self.cap"] > 5 and slots["1"] > 5, slots
    built = 0
    for item in made.inputs:
        (me, _n), _ = _unpack(base64.b64decode(item.pickle_b64))
        patch = {str(r.slot): plain.decode(r.value) for r in item.replaced}
        assert type(me) is Bag
        if "self.0" in patch or "self.cap" in patch:  # built afresh from the replaced class call
            seed_n = int(item.origin.removeprefix("t::"))
            items, cap = patch.get("self.0", [seed_n, 5, 1]), patch.get("self.cap", 3)
            assert (me.items, me.cap) == (sorted(items)[:cap], cap)
            assert seed_call(item).build
            built += 1
        else:  # the seed's own self, and no class call carried along
            assert me.cap == 3 and seed_call(item).ctor is None
    assert built > 10
    # a built self is a fresh object: within its share of each stratum, the rest on real selves
    budget = Budget()
    assert built <= budget.built_selves(budget.widened) + budget.built_selves(budget.edge)
    assert len(made.inputs) - built >= 10


def test_a_method_of_self_alone_reaches_a_sparse_tasks_20_inputs_only_at_the_sparse_share() -> None:
    me = Bag([4, 5, 1], cap=3)
    call = pickle.dumps(((me,), {}))
    ctor = pickle.dumps((([4, 5, 1],), {"cap": 3}))
    item = CallInput(index=0, origin="t::0", pickle_b64=recipe_b64(call, {}, ctor))
    enc = {"t": "obj", "type": "tests.Bag", "fields": {}}
    seed = Seed(item, (enc,), {}, True, (plain.encode([4, 5, 1]),), {"cap": plain.encode(3)})
    target = _target("method", "    def size(self):")
    # only built selves to generate: the usual share caps them under 20 (the control) ...
    assert len(widen(target, [seed], 1, Budget()).inputs) < MIN_SPARSE_GENERATED
    sparse = Budget(self_share=SPARSE_SELF_SHARE)
    assert len(widen(target, [seed], 1, sparse).inputs) >= MIN_SPARSE_GENERATED


def test_nothing_to_generate_from() -> None:
    me = {"t": "obj", "type": "tests.Box", "fields": {}}
    objects = [_seed(n, (Box(),), [me]) for n in range(3)]
    assert widen(_target(), objects, 3, Budget()).generatable is False
    raising = [_seed(n, (n,), ok=False) for n in range(3)]  # calls made to see an error
    assert widen(_target(), raising, 3, Budget()).inputs == ()


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


def test_a_parameters_default_is_an_edge_case_when_no_call_passed_it() -> None:
    target = _target(signature="def take(items, n=None):").model_copy(
        update={"qualname": "take", "docstring": None}
    )
    seeds = [_seed(k, ([1, 2, 3], k)) for k in range(1, 4)]
    made = widen(target, seeds, 3, Budget(widened=0, edge=12, iterables=0))
    edges = [call[1] for item, call in zip(made.inputs, _calls(made.inputs), strict=True)]
    assert None in edges  # n=None: the path no traced call took
    passed = [_seed(k, ([1, 2, 3], None if k == 2 else k)) for k in range(1, 4)]
    again = widen(target, passed, 3, Budget(widened=0, edge=12, iterables=0))
    assert not any(call[1] is None for call in _calls(again.inputs))  # a call passed it already


def test_a_draw_without_a_plain_encoding_is_left_out() -> None:
    # A generated value the tagged encoding has no form for (a complex) cannot be recorded as a
    # replacement: recording it raised and ended the whole gen (seen on boltons).
    with pytest.raises(plain.NotPlain):
        replacements({0: 1j})
    assert not inputs._encodes({0: 1j, 1: 2})
    assert inputs._encodes({0: 1.5, "key": [1, "a"]})


def test_parameters_a_call_leaves_out_are_widened_by_keyword() -> None:
    # the tests call only `text.split()`: `self` is never varied and no argument was passed, so
    # before, nothing could be generated; the defaulted parameters left out are slots too
    me = {"t": "obj", "type": "tests.Box", "fields": {}}
    seeds = [_seed(n, (Box(),), [me]) for n in range(3)]
    target = _target("method", "    def split(self, sep=None, maxsplit=-1, /, *, strict=False):")
    made = widen(target, seeds, 3, Budget(widened=30, edge=10))
    assert made.generatable and made.inputs
    calls = [_unpack(base64.b64decode(i.pickle_b64)) for i in made.inputs]
    assert all(len(args) == 1 and type(args[0]) is Box for args, _ in calls)
    assert {name for _, kwargs in calls for name in kwargs} == {"strict"}  # `/`: not by keyword
    assert [kwargs for _, kwargs in calls] == [{"strict": True}]  # the default is the seed's call
    loose = target.model_copy(update={"signature": "    def split(self, sep=None, maxsplit=-1):"})
    calls = [
        _unpack(base64.b64decode(i.pickle_b64)) for i in widen(loose, seeds, 3, Budget()).inputs
    ]
    assert {name for _, kwargs in calls for name in kwargs} <= {"sep", "maxsplit"}
    assert len({kwargs.get("maxsplit") for _, kwargs in calls}) > 3
    assert {"maxsplit": -1} not in [kwargs for _, kwargs in calls]  # the seed's call again
