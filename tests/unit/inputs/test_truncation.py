"""Calls cut down to size (`replicate.inputs.truncation`): the largest sized plain argument cut
to its first half, quarter and eighth, the others and the call's own replacements as they were."""

from __future__ import annotations

import base64
import pickle
from typing import Any

from replicate.core import CallInput
from replicate.inputs import cut_down, recipe_b64, with_replacements
from replicate.values import plain


def _traced(*args: Any, **kwargs: Any) -> tuple[CallInput, dict[str, Any]]:
    data = base64.b64encode(pickle.dumps((args, kwargs), protocol=4)).decode()
    item = CallInput(index=0, pickle_b64=data, origin="tests/test_a.py::test_a")
    outcome = {
        "status": "returned",
        "args_in": [plain.encode(a) for a in args],
        "kwargs_in": {k: plain.encode(v) for k, v in kwargs.items()},
    }
    return item, outcome


def _patch(item: CallInput) -> dict[Any, Any]:
    return {r.slot: plain.decode(r.value) for r in item.replaced}


def test_the_largest_argument_is_cut_to_a_half_a_quarter_and_an_eighth() -> None:
    text = "abcdefghijklmnop"
    made = cut_down("function", [_traced(text, ",", limit=[1, 2])], first_index=7, limit=10)
    assert [_patch(i) for i in made] == [{0: text[:8]}, {0: text[:4]}, {0: text[:2]}]
    assert [i.index for i in made] == [7, 8, 9]
    assert {(i.provenance, i.stratum, i.visible) for i in made} == {("widened", "widened", False)}


def test_a_generated_call_keeps_its_own_replacements() -> None:
    seed, outcome = _traced([1, 2, 3, 4], "x")
    generated = with_replacements(
        seed.model_copy(update={"pickle_b64": _recipe_of(seed)}), {1: "y"}, index=3
    )
    assert generated is not None
    outcome = {**outcome, "args_in": [plain.encode([1, 2, 3, 4]), plain.encode("y")]}
    made = cut_down("function", [(generated, outcome)], first_index=9, limit=10)
    assert [_patch(i) for i in made] == [{0: [1, 2], 1: "y"}, {0: [1], 1: "y"}]


def test_nothing_sized_nothing_past_the_limit() -> None:
    assert cut_down("function", [_traced(3, None)], first_index=1, limit=10) == []
    assert cut_down("function", [_traced("abcdefgh")], first_index=1, limit=0) == []
    assert len(cut_down("function", [_traced("abcdefgh")] * 3, first_index=1, limit=4)) == 4


def _recipe_of(item: CallInput) -> str:
    return recipe_b64(base64.b64decode(item.pickle_b64), {})
