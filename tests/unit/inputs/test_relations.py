"""Relations every traced call respects are kept by generated calls."""

from __future__ import annotations

import math

from replicate.inputs.relations import Relation, holds, infer_relations
from replicate.values.plain import Items


def test_order_between_numbers_is_inferred_and_enforced() -> None:
    calls = [{0: 5, 1: 0, 2: 10}, {0: -3, 1: 0, 2: 10}, {0: 12, 1: 1.0, 2: 2.0}]
    relations = infer_relations(calls)
    assert Relation(1, 2, "<") in relations
    assert not any(r.left == 0 or r.right == 0 for r in relations)  # value: unconstrained
    assert holds(relations, {0: 99, 1: 2, 2: 3})
    assert not holds(relations, {0: 1, 1: 3, 2: 2})
    assert not holds(relations, {0: 1, 1: math.nan, 2: 2})  # NaN breaks an order
    assert holds(relations, {0: 1, 1: 3})  # a relation applies only when both slots are there


def test_equal_lengths() -> None:
    calls = [{0: [1, 2], 1: "ab"}, {0: [], 1: ""}, {0: Items((1,)), 1: "x"}]
    relations = infer_relations(calls)
    assert Relation(0, 1, "len==") in relations
    assert not holds(relations, {0: [1], 1: "xy"})
    assert holds(relations, {0: [1, 2, 3], 1: "xyz"})


def test_too_few_calls_or_mixed_types_give_no_relation() -> None:
    assert infer_relations([{0: 1, 1: 2}, {0: 1, 1: 3}]) == []
    assert infer_relations([{0: 1, "k": 2}, {0: 1, "k": "a"}, {0: 0, "k": 5}]) == []
