"""Simpler JavaScript values for shrinking (`values/javascript_shrink.py`): every proposal is
strictly smaller than the value it came from, smallest first, never the value itself, and the
proposals reach every magnitude below an integer at once (so a shrink toward a boundary takes
a few rounds, not one a halving)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from replicate.values import javascript as js
from replicate.values.javascript_shrink import simpler, simpler_args, size

NUMBERS = st.floats(allow_nan=True, allow_infinity=True).map(js.Num.of)
LEAVES = st.one_of(st.booleans(), st.text(max_size=12), NUMBERS)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5).map(lambda items: js.Array(tuple(items))),
        st.dictionaries(st.text(max_size=4), inner, max_size=4).map(
            lambda d: js.PlainObject(js.fields(d))
        ),
    ),
    max_leaves=12,
)


@given(VALUES)
def test_every_proposal_is_smaller_and_they_come_smallest_first(value: js.JsValue) -> None:
    found = simpler(value)
    sizes = [size(v) for v in found]
    assert all(s < size(value) for s in sizes)
    assert sizes == sorted(sizes) and value not in found


@given(st.lists(LEAVES, min_size=1, max_size=3))
def test_a_calls_proposals_change_one_argument(args: list[js.JsValue]) -> None:
    for call in simpler_args(tuple(args)):
        changed = [n for n, (a, b) in enumerate(zip(args, call, strict=True)) if a != b]
        assert len(changed) == 1 and size(call[changed[0]]) < size(args[changed[0]])


def test_an_integer_proposes_every_magnitude_below_it() -> None:
    values = {v.value for v in simpler(js.Num.of(2.0**53 - 1)) if isinstance(v, js.Num)}
    assert {0.0, 1.0, 127.0, 2.0**20 - 1} <= values
    assert simpler("abc")[0] == "" and js.Array(()) in simpler(js.Array((js.Num.of(5.0),)))
