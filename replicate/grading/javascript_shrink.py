"""Shrinking a JavaScript counterexample that came from a generated input, against the original
(feedback only: the reward never depends on it), as a Python one is (`grading.shrink`).

The failing call's arguments are replaced, one at a time, by simpler values
(`values.javascript_shrink`: shorter strings, integers nearer zero, shorter arrays, fewer
fields); the original and the candidate each run on a batch of those calls in a jailed Node
process; the smallest call on which the original answers (returns or throws) and the candidate
differs becomes the counterexample, `shrunk_from` naming the hidden input's call. That repeats
for a few rounds within a time budget. A method's `this` is kept as it is.
"""

from __future__ import annotations

import time

from replicate.batch import LoadedTask
from replicate.core import Counterexample
from replicate.grading.javascript import compare_node, task_target
from replicate.grading.mismatch import Mismatch
from replicate.grading.reward import counterexample
from replicate.jail import Sandbox, node
from replicate.values import javascript_shrink, javascript_text

ROUNDS = 6
PROPOSALS = 40  # calls a round runs, the smallest first
BUDGET_S = 4.0
ANSWERED = (node.Status.RETURNED, node.Status.RAISED)


def shrink_script(
    task: LoadedTask, spliced: bytes, example: Counterexample, sandbox: Sandbox
) -> Counterexample:
    """`example` with a smaller call where one is found; as it was otherwise."""
    item = next((i for i in task.inputs if i.index == example.index), None)
    if item is None or item.provenance != "widened" or item.node_call is None:
        return example
    call = node.read_call(item.node_call)
    found: tuple[node.NodeCall, Mismatch] | None = None
    deadline = time.monotonic() + BUDGET_S
    for _ in range(ROUNDS):
        smaller = _smaller(task, spliced, call, sandbox, deadline)
        if smaller is None:
            break
        found = smaller
        call = smaller[0]
    if found is None:
        return example
    text = javascript_text.call_text(task.hidden.target.name, call.args, call.this)
    shrunk = counterexample(item.model_copy(update={"call": text}), found[1])
    return shrunk.model_copy(update={"shrunk_from": example.call})


def _smaller(
    task: LoadedTask, spliced: bytes, call: node.NodeCall, sandbox: Sandbox, deadline: float
) -> tuple[node.NodeCall, Mismatch] | None:
    """The smallest simpler call the candidate gets wrong, with how; None when none is found
    (or the time is up)."""
    left = deadline - time.monotonic()
    proposals = [
        node.NodeCall(args, call.this)
        for args in javascript_shrink.simpler_args(call.args)[:PROPOSALS]
    ]
    if left <= 0.2 or not proposals:
        return None
    settings = node.NodeSettings(timeout_s=left / 2, memory_mb=task.hidden.grading.memory_mb)
    where, tree = task_target(task), task.repo.tree
    original = node.run_node(sandbox, tree, where, proposals, settings=settings).outcomes
    got = node.run_node(
        sandbox, tree, where, proposals, candidate=spliced, settings=settings
    ).outcomes
    message = task.hidden.grading.compare_exception_message
    for proposal, want, have in zip(proposals, original, got, strict=True):
        if want.status in ANSWERED:
            miss = compare_node(want, have, message)
            if miss is not None:
                return proposal, miss
    return None
