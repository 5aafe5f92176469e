"""Recipes: the description of a generated call, turned into the call by the runner."""

from __future__ import annotations

import base64
import pickle

import pytest

from replicate.core.records import CallInput
from replicate.inputs.recipes import (
    CTOR_RECIPE_TAG,
    SeedCall,
    recipe_b64,
    recipe_parts,
    seed_call,
    with_replacements,
)
from replicate.inputs.widening import Budget, widen
from replicate.jail.runner.calling import _unpack
from replicate.values import plain
from tests.unit.inputs.test_inputs import SEEDS, Box, _target


class Counter2:
    """A class whose instances are built by a class call the harvest recorded."""

    def __init__(self, start: int, step: int = 1) -> None:
        self.value, self.step = start, step


def test_recipes_round_trip_through_the_runner() -> None:
    seed = pickle.dumps(((Box(), 1, "a"), {"k": 2}))
    blob = recipe_b64(seed, {2: {3, 1}, "k": plain.Items((4, 5)), "new": None})
    assert recipe_parts(blob) == SeedCall(seed)
    args, kwargs = _unpack(base64.b64decode(blob))
    assert type(args[0]) is Box and args[1:] == (1, {1, 3})
    assert list(kwargs["k"]) == [4, 5] and kwargs["new"] is None  # a fresh iterator
    legacy = pickle.dumps(((1,), {}))
    assert _unpack(legacy) == ((1,), {})
    assert recipe_parts(base64.b64encode(legacy).decode()) is None


def test_a_recipe_keeps_what_its_values_share_and_builds_the_same_sets() -> None:
    words = frozenset({"a", "b", "c"})
    shared = [words, {1, 2}]
    seed = pickle.dumps(((0, 0, 0), {}))
    args, _ = _unpack(base64.b64decode(recipe_b64(seed, {0: shared, 1: shared, 2: {words: 1}})))
    assert args[0] == [words, {1, 2}] and args[0] is args[1]  # one list, as in the patch
    assert type(args[0][0]) is frozenset and args[2] == {words: 1}


def test_a_recipe_with_the_class_call_builds_self_only_when_that_call_changes() -> None:
    me = Counter2(5, step=2)
    me.value = 99  # state the class call does not give: kept unless self is rebuilt
    seed = pickle.dumps(((me, 1), {}))
    ctor = pickle.dumps(((5,), {"step": 2}))
    kept = recipe_b64(seed, {1: 7}, ctor)
    assert pickle.loads(base64.b64decode(kept))[0] == CTOR_RECIPE_TAG
    assert recipe_parts(kept) == SeedCall(seed, ctor, build=False)
    seen: list[object] = []
    (obj, n), _ = _unpack(base64.b64decode(kept), lambda a, k: seen.append((a, k)))
    assert (obj.value, obj.step, n) == (99, 2, 7) and seen == [((5,), {"step": 2})]
    built = recipe_b64(seed, {"self.0": -4, "self.step": 3}, ctor)
    assert recipe_parts(built) == SeedCall(seed, ctor, build=True)
    (obj, n), _ = _unpack(base64.b64decode(built))
    assert type(obj) is Counter2 and (obj.value, obj.step, n) == (-4, 3, 1)
    other = pickle.dumps(((7,), {}))  # another class call of the class: built as it is
    (obj, n), _ = _unpack(base64.b64decode(recipe_b64(seed, {}, other, build=True)))
    assert (obj.value, obj.step, n) == (7, 1, 1)
    for bad in ({"self.0": 1}, {}):
        with pytest.raises(ValueError, match="class call"):
            recipe_b64(seed, bad, build=True)
    raising = recipe_b64(seed, {"self.step": 1}, pickle.dumps(((), {})))  # Counter2() raises
    with pytest.raises(TypeError):
        _unpack(base64.b64decode(raising))


def test_with_replacements_keeps_the_seed_and_the_class_call() -> None:
    made = widen(_target(), SEEDS, 10, Budget(widened=3, edge=0))
    item = made.inputs[0]
    other = with_replacements(item, {0: 0, 1: -1}, 99)
    assert other is not None and other.index == 99 and other.provenance == item.provenance
    assert recipe_parts(other.pickle_b64) == recipe_parts(item.pickle_b64)
    assert [(r.slot, plain.decode(r.value)) for r in other.replaced] == [(0, 0), (1, -1)]
    seed, ctor = pickle.dumps(((Counter2(1), 2), {})), pickle.dumps(((1,), {}))
    withself = CallInput(index=1, pickle_b64=recipe_b64(seed, {"self.0": 3}, ctor))
    shrunk = with_replacements(withself, {"self.0": 0}, 5)
    assert shrunk is not None and seed_call(shrunk) == SeedCall(seed, ctor, build=True)
    (obj, _), _ = _unpack(base64.b64decode(shrunk.pickle_b64))
    assert obj.value == 0


def test_a_plain_pickle_is_its_own_seed() -> None:
    blob = pickle.dumps(((1, 2), {}))
    item = CallInput(index=0, pickle_b64=base64.b64encode(blob).decode())
    assert seed_call(item) == SeedCall(blob)
