"""Choosing the generated inputs that kill surviving mutants."""

from __future__ import annotations

from replicate.gen.survivors import pick_killers, reference_run, search
from replicate.inputs.widening import Budget
from replicate.jail import Jail
from replicate.jail.calls import RepoContext
from replicate.sandbox.base import Sandbox
from tests.integration.minted import Tiny


def test_pick_killers_prefers_inputs_that_kill_many() -> None:
    wrong = [frozenset({10, 11}), frozenset({11, 12}), frozenset(), frozenset({13})]
    assert pick_killers(wrong, [10, 11, 12, 13], per_survivor=1, limit=5) == [11, 13]
    assert pick_killers(wrong, [10, 11, 12, 13], per_survivor=2, limit=5) == [11, 10, 12, 13]
    assert pick_killers(wrong, [10, 11, 12, 13], per_survivor=2, limit=2) == [11, 10]


def test_the_search_varies_a_methods_self_from_its_class_calls(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    task = tiny.task("tinypkg.core.Counter.add")
    reference = reference_run(task, Jail(tiny_ctx, local_sandbox))
    assert not isinstance(reference, str)
    traced = [s for s in reference.seeds if s.item.provenance == "traced"]
    others = [s for s in reference.seeds if s.item.provenance != "traced"]
    assert traced and others  # Counter.add on a self built by the other test's class call
    assert {len(s.ctor_args) for s in reference.seeds} == {0, 1}  # Counter(), Counter(10)
    found = search(task, Jail(tiny_ctx, local_sandbox), reference, Budget(widened=40, edge=0))
    slots = {str(r.slot) for item in found.inputs for r in item.replaced}
    assert "self.0" in slots and "0" not in slots, slots  # `amount` is positional 1
