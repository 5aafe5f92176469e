"""Calls fast-check draws for a JavaScript target, kept where the original gives each one
outcome: a task's widened inputs (`gen.javascript.widen`) and the survivor search's
(`gen.javascript_strength`) are both made here, and each one becomes a hidden input
(`hidden_input`) the same way a recorded call does.

A drawn call is run on the original once as a candidate is graded (a fresh `Math.random` seed,
the true clock), kept where it returns or throws, then kept only where it gives that outcome
again under each of `GOLDEN_RUNS` (another seed; that seed and a shifted clock): the determinism
gate a recorded call passes too (`jail.node_harvest.stable`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from replicate.batch import LoadedTask
from replicate.core import CallInput, Provenance, Target, render_prompt
from replicate.gen.golden import CLOCK_SHIFT_DAYS
from replicate.grading import javascript as graded
from replicate.jail import Sandbox, node, node_harvest, node_widening
from replicate.values import javascript_text

# The determinism gate's runs: another seed of Math.random, then that and a shifted clock
GOLDEN_RUNS = (
    node.NodeSettings(random_seed=1),
    node.NodeSettings(random_seed=2, clock_shift_days=CLOCK_SHIFT_DAYS),
)
WIDENED_ORIGIN = "fast-check"
ANSWERED = (node.Status.RETURNED, node.Status.RAISED)
Added = tuple[tuple[CallInput, node.NodeOutcome], ...]  # searched inputs, the original's outcomes


def drawn_stable(
    sandbox: Sandbox,
    tree: Path,
    where: node.NodeTarget,
    samples: Sequence[node.NodeCall],
    widening: node_widening.Widening,
) -> tuple[node_harvest.Recorded, ...]:
    """Calls drawn from `samples` by `widening`, each with the original's outcome, where that
    outcome is a return or a throw and the same under every one of `GOLDEN_RUNS`."""
    drawn = node_widening.widen_node_calls(sandbox, samples, widening)
    if not drawn:
        return ()
    first = node.run_node(sandbox, tree, where, drawn).outcomes
    runs = [
        node_harvest.Recorded(where, call, outcome, WIDENED_ORIGIN)
        for call, outcome in zip(drawn, first, strict=True)
        if outcome.status in ANSWERED
    ]
    harvest = node_harvest.Harvest(tuple(runs), ())
    return node_harvest.stable(sandbox, tree, harvest, GOLDEN_RUNS)


def hidden_input(
    index: int, recorded: node_harvest.Recorded, target: Target, generated: bool = False
) -> CallInput:
    """A hidden input; its stratum: raises where the original throws, as a Python task's."""
    call = recorded.call
    provenance: Provenance = "widened" if generated else "traced"
    raised = recorded.outcome.status is node.Status.RAISED
    return CallInput(
        index=index,
        origin=recorded.test_file,
        call=javascript_text.call_text(target.name, call.args, call.this),
        node_call=node.call_json(call),
        stratum="raises" if raised else provenance,
        provenance=provenance,
        visible=recorded.visible and not generated,
    )


def with_inputs(
    task: LoadedTask, added: Sequence[tuple[CallInput, node.NodeOutcome]], language: str
) -> LoadedTask:
    """The task with searched inputs (and the original's outcomes) added after its own."""
    inputs = (*task.inputs, *(item for item, _ in added))
    spec = task.spec.model_copy(update={"hidden_inputs": len(inputs)})
    prompt = render_prompt(task.hidden.target, spec.examples, len(inputs), language)
    expected = {**task.expected, **{i.index: node.outcome_json(o) for i, o in added}}
    return replace(task, spec=spec, inputs=inputs, expected=expected, prompt=prompt)


def next_index(task: LoadedTask) -> int:
    """The index an input added to `task` starts at."""
    return max((i.index for i in task.inputs), default=-1) + 1


def searched_calls(
    task: LoadedTask, sandbox: Sandbox, search: node_widening.Widening
) -> tuple[node_harvest.Recorded, ...]:
    """Calls drawn from the task's traced ones by `search` and kept where the original answers
    them alike (`drawn_stable`), none a call the task holds already."""
    known = {_key(item.node_call) for item in task.inputs}
    samples = [node.read_call(i.node_call or {}) for i in task.inputs if i.provenance == "traced"]
    if not samples:
        return ()
    drawn = drawn_stable(sandbox, task.repo.tree, graded.task_target(task), samples, search)
    return tuple(r for r in drawn if _key(node.call_json(r.call)) not in known)


def _key(node_call: object) -> str:
    return json.dumps(node_call, sort_keys=True)
