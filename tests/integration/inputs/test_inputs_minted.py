"""Generated inputs of a minted task run as their recipes say (tests/unit/inputs/test_inputs.py
tests the widening itself)."""

from __future__ import annotations

from replicate.inputs.recipes import seed_call
from replicate.values import plain
from replicate.values.rendering import render
from tests.integration.minted import Tiny


def test_minted_generated_inputs_run_as_their_recipes_say(tiny: Tiny) -> None:
    task = tiny.task("tinypkg.core.clamp")
    generated = [i for i in task.inputs if i.provenance != "traced"]
    assert len(generated) >= 20
    for item in generated:
        # the call was rendered from what the runner received: the replaced values are there
        shown = [render(r.value, 120) for r in item.replaced]
        assert all(text in item.call for text in shown), (item.call, shown)


def test_a_minted_methods_self_is_built_from_other_class_calls(tiny: Tiny) -> None:
    task = tiny.task("tinypkg.core.Counter.add")
    traced = [i for i in task.inputs if i.provenance == "traced"]
    generated = [i for i in task.inputs if i.provenance != "traced"]
    # the traced calls carry the class call that built their self: Counter() and Counter(10)
    assert all(seed_call(i).ctor is not None and not seed_call(i).build for i in traced)
    built = [i for i in generated if seed_call(i).build]
    varied = [i for i in built if any(str(r.slot) == "self.0" for r in i.replaced)]
    assert len(varied) >= 5, [i.call for i in generated]
    for item in varied:  # Counter(start).add(amount): self's total is the replaced start
        start = next(plain.decode(r.value) for r in item.replaced if r.slot == "self.0")
        assert item.call.startswith("Counter(") and f"total={render(plain.encode(start), 120)}" in (
            item.call
        ), item.call
    # the calls of one self on a self another class call built (Counter() <-> Counter(10))
    assert any(not i.replaced for i in built)
    assert all("ctor_in" not in task.expected[i.index] for i in task.inputs)
