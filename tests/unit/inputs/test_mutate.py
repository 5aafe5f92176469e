"""Type-aware mutation and boundary values."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from replicate.inputs.mutate import LONG, boundaries, mutate, pool_of
from replicate.values.plain import Items
from tests.ids import stable_id

POOL = pool_of([["alpha beta", 7], {"k": 2.5}, b"xy", Items(("z",))])


def test_pool_collects_leaves_and_tokens() -> None:
    assert {"alpha beta", "alpha", "beta", " ", "k", "z"} <= set(POOL.strings)
    assert POOL.ints == (7,) and POOL.floats == (2.5,) and POOL.blobs == (b"xy",)


@pytest.mark.parametrize(
    "value",
    [
        True,
        5,
        -2.5,
        "hello",
        b"abc",
        [1, 2, 3],
        (1, "a"),
        {1, 2},
        frozenset("ab"),
        {"a": 1},
        range(1, 9),
        Items((1, 2)),
    ],
    ids=stable_id,
)
def test_mutants_keep_the_type(value: Any) -> None:
    rng = random.Random(1)
    mutants = [mutate(value, rng, POOL) for _ in range(40)]
    assert all(type(m) is type(value) for m in mutants)
    assert any(m != value for m in mutants)
    if type(value) is tuple:
        assert all(len(m) == len(value) for m in mutants)  # tuples keep their arity


def test_mutation_is_deterministic_given_the_generator() -> None:
    one = [mutate([1, "a", 2.0], random.Random(5), POOL) for _ in range(10)]
    two = [mutate([1, "a", 2.0], random.Random(5), POOL) for _ in range(10)]
    assert one == two


def test_strings_splice_tokens_from_the_pool() -> None:
    rng = random.Random(2)
    mutants = {mutate("x", rng, POOL) for _ in range(200)}
    assert any("alpha" in m or "beta" in m for m in mutants)


def test_boundaries_of_each_type() -> None:
    floats = boundaries(1.5)
    assert any(math.isnan(f) for f in floats) and math.inf in floats and -math.inf in floats
    assert any(f == 0.0 and math.copysign(1, f) < 0 for f in floats)  # -0.0
    assert {0, -1, 2**31 - 1} <= set(boundaries(4))
    assert "" in boundaries("abc") and any(ord(c) > 0xFFFF for s in boundaries("x") for c in s)
    lists = boundaries([3, 4])
    assert [] in lists and [3] in lists and [3] * LONG in lists and [3, 4, 0] in lists
    assert boundaries(Items((1,)))[0] == Items(())
    assert boundaries({"a": 1}) == [{}, {"a": 1}]
    assert boundaries(None) == [] and boundaries(True) == [False]


def test_slices_move_one_field_and_have_edges() -> None:
    # more_itertools._islice_helper is traced only with slice(-4, None): widening stayed there
    # while slices were not plain, and half its mutants survived (bench/strength.py).
    seen = slice(-4, None)
    rng = random.Random(3)
    moved = [mutate(seen, rng, POOL) for _ in range(60)]
    assert all(type(m) is slice and m.step != 0 for m in moved)
    fields = {(m.start, m.stop, m.step) for m in moved}
    assert len(fields) > 6 and any(f[1] is not None for f in fields)
    assert any(f[0] != -4 and f[1] is None for f in fields)  # the start moved
    edges = boundaries(seen)
    assert slice(None) in edges and slice(None, None, -1) in edges and seen not in edges
