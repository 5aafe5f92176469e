"""Choosing the generated inputs that kill surviving mutants."""

from __future__ import annotations

from replicate.gen.survivors import pick_killers


def test_pick_killers_prefers_inputs_that_kill_many() -> None:
    wrong = [frozenset({10, 11}), frozenset({11, 12}), frozenset(), frozenset({13})]
    assert pick_killers(wrong, [10, 11, 12, 13], per_survivor=1, limit=5) == [11, 13]
    assert pick_killers(wrong, [10, 11, 12, 13], per_survivor=2, limit=5) == [11, 10, 12, 13]
    assert pick_killers(wrong, [10, 11, 12, 13], per_survivor=2, limit=2) == [11, 10]
