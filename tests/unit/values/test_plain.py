"""Plain values <-> the runner's tagged encoding, on the trusted side (no unpickling)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from replicate.jail.runner.encoding import encode as runner_encode
from replicate.values import plain
from replicate.values.plain import Items, NotPlain
from tests.ids import stable_id

VALUES: list[Any] = [
    None,
    True,
    0,
    -(2**80),
    1.5,
    -0.0,
    "h\u00e9llo",
    b"\x00\xff",
    [1, [2, "x"]],
    (1, "a", None),
    {"k": [1, 2], 3: (4,)},
    {3, 1, 2},
    frozenset({"a", "b"}),
    range(2, 10, 3),
    slice(-4, None),
    slice(1, 9, 2),
]


@pytest.mark.parametrize("value", VALUES, ids=stable_id)
def test_round_trip_and_agreement_with_the_runner(value: Any) -> None:
    node = plain.encode(value)
    back = plain.decode(node)
    assert back == value and type(back) is type(value)
    # the trusted side encodes as the runner does (up to the order of set members)
    assert plain.canonical(node) == plain.canonical(runner_encode(value))


def test_floats_keep_sign_of_zero_and_nan() -> None:
    assert math.copysign(1.0, plain.decode(plain.encode(-0.0))) == -1.0
    assert math.isnan(plain.decode(plain.encode(math.nan)))
    assert plain.decode(plain.encode(math.inf)) == math.inf


def test_iterator_items_read_as_items() -> None:
    node = runner_encode(iter([1, "a"]))
    assert plain.decode(node) == Items((1, "a"))
    assert plain.encode(Items((1, "a"))) == node


@pytest.mark.parametrize(
    "node",
    [
        {"t": "obj", "type": "m.Box", "fields": {}},
        {"t": "ref", "v": "builtins.len"},
        {"t": "opaque", "type": "x"},
        {"t": "iter", "v": [], "truncated": True},
        {"t": "list", "v": [{"t": "int", "v": "1"}, {"t": "obj", "type": "m.B", "fields": {}}]},
        {"t": "set", "v": [{"t": "list", "v": []}]},  # an unhashable member
        {"t": "slice", "v": [{"t": "str", "v": "a"}, {"t": "none"}, {"t": "none"}]},
        {"t": "int", "v": "1" * 5000},
        {"t": "bytes", "v": "not base64!"},
        "not a node",
    ],
)
def test_anything_else_is_not_plain(node: Any) -> None:
    with pytest.raises(NotPlain):
        plain.decode(node)
    assert plain.try_decode(node) == (False, None)


def test_canonical_ignores_the_order_of_set_members_and_dict_pairs() -> None:
    a = {"t": "set", "v": [{"t": "int", "v": "1"}, {"t": "int", "v": "2"}]}
    b = {"t": "set", "v": [{"t": "int", "v": "2"}, {"t": "int", "v": "1"}]}
    assert plain.canonical(a) == plain.canonical(b)
    lst_a, lst_b = {**a, "t": "list"}, {**b, "t": "list"}
    assert plain.canonical(lst_a) != plain.canonical(lst_b)


def test_size_orders_simpler_values_first() -> None:
    assert plain.size([]) < plain.size([1]) < plain.size([1, 2])
    assert plain.size(0) < plain.size(12345)
    assert plain.size("") < plain.size("abc")
    assert plain.size(2.0) < plain.size(2.5)
