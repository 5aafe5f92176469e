"""The comparison's fast path (`compare._same_gradable`): an outcome equal to the expected one
matches at once, but only where ``==`` is exact (text at every leaf) and the expected outcome
matches itself; everything else takes the full walk, with the same answer."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from replicate.core.records import GradingSettings
from replicate.grading import compare, exact
from replicate.grading.compare import compare_outcome
from replicate.jail.runner.encoding import encode

SETTINGS = GradingSettings()


def _returned(node: dict[str, Any], t: float = 0.01) -> dict[str, Any]:
    return {"status": "returned", "value": node, "args": [], "kwargs": {}, "t": t}


def test_an_equal_outcome_takes_the_fast_path() -> None:
    expected = _returned(encode({"a": [1, (2.5, None)], "b": "x"}))
    got = copy.deepcopy(expected) | {"t": 0.5}  # another duration
    assert compare._same_gradable(expected, got)
    assert compare_outcome(expected, got, SETTINGS) is None


def test_equal_outcomes_that_never_match_are_still_mismatches() -> None:
    opaque = _returned({"t": "opaque", "v": "<object at 0x1>"})
    assert opaque == copy.deepcopy(opaque)  # the control: equal, as a bare == would accept
    assert not compare._same_gradable(opaque, copy.deepcopy(opaque))
    assert compare_outcome(opaque, copy.deepcopy(opaque), SETTINGS) is not None


def test_a_number_for_a_flag_is_no_match_though_python_calls_them_equal() -> None:
    expected = _returned({"t": "lock", "held": False})
    forged = _returned({"t": "lock", "held": 0})
    assert expected == forged  # the control: False == 0
    assert not compare._same_gradable(expected, forged)
    assert compare_outcome(expected, forged, SETTINGS) is not None
    assert compare_outcome(expected, copy.deepcopy(expected), SETTINGS) is None


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(VALUES, VALUES)
def test_the_fast_path_answers_as_the_full_walk(a: Any, b: Any) -> None:
    expected, got = _returned(encode(a)), _returned(encode(b), t=0.2)
    for other in (got, copy.deepcopy(expected)):
        walked = compare._walk(expected, other, SETTINGS)
        assert (compare_outcome(expected, other, SETTINGS) is None) == (walked is None)


def test_outcomes_read_from_one_text_share_their_values_and_take_the_identity_path() -> None:
    expected = _returned(encode({"a": [1, "x"]}))
    shared = {k: v for k, v in expected.items() if k != "t"} | {"t": 0.9}  # as KnownOutcomes
    assert exact.same_objects(exact.without_time(expected), shared)
    assert compare_outcome(expected, shared, SETTINGS) is None
    assert exact.same_outcome(expected, shared)
    opaque = _returned({"t": "opaque", "v": "<object at 0x1>"})
    shared_opaque = {**opaque, "t": 0.4}
    assert exact.same_objects(exact.without_time(opaque), shared_opaque)  # the control
    assert compare_outcome(opaque, shared_opaque, SETTINGS) is not None  # still never matches
    extra = {**expected, "args_in": []}  # one key more: not the same outcome
    assert not exact.same_objects(exact.without_time(expected), extra)


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_the_identity_path_answers_as_the_full_walk(a: Any) -> None:
    expected = _returned(encode(a))
    shared = {**expected, "t": 0.7}
    walked = compare._walk(expected, copy.deepcopy(expected), SETTINGS)
    assert (compare_outcome(expected, shared, SETTINGS) is None) == (walked is None)
    assert exact.same_outcome(expected, shared)
