"""Before a task at the floor is dropped, inputs that tell it from its degenerate programs are
searched and added; the baseline computed again falls under the floor."""

from __future__ import annotations

import dataclasses

from replicate.batch.store import LoadedTask
from replicate.gen.baseline import baseline, overpaid, too_weak
from replicate.gen.separate import MAX_ADDED, NONE, Separating, separating
from replicate.gen.target import SEARCH_ROUNDS
from replicate.grading.grader import grade_text
from replicate.jail import Jail
from replicate.jail.calls import RepoContext
from replicate.sandbox.base import Sandbox
from tests.integration.minted import Tiny


def _only_visible(task: LoadedTask) -> LoadedTask:
    """The task as if only the calls its tests make were hidden inputs (no generated input)."""
    traced = tuple(i.model_copy(update={"stratum": "traced"}) for i in task.inputs if i.visible)
    expected = {i.index: task.expected[i.index] for i in traced}
    return dataclasses.replace(task, inputs=traced, expected=expected)


def _with(task: LoadedTask, extra: Separating) -> LoadedTask:
    start = max(i.index for i in task.inputs) + 1
    added = [i.model_copy(update={"index": start + n}) for n, i in enumerate(extra.added)]
    outcomes = {start + n: extra.expected[i.index] for n, i in enumerate(extra.added)}
    return dataclasses.replace(
        task, inputs=(*task.inputs, *added), expected={**task.expected, **outcomes}
    )


def test_inputs_the_table_cannot_answer_bring_the_baseline_under_the_floor(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    task = _only_visible(tiny.task("tinypkg.core.clamp"))
    found = baseline(task, Jail(tiny_ctx, local_sandbox))
    assert not isinstance(found, str)
    # Without the search: the table of the visible calls answers every hidden input, and
    # the candidate that memorised the tests earns the reference's raw reward.
    assert found.raw_reward == 1.0
    assert too_weak(found) == (
        "a degenerate program (the visible calls, else raise) scores 0.5 or more"
    )
    widened, again = task, found
    for round_ in range(SEARCH_ROUNDS):  # as gen searches: again while some program is there
        if too_weak(again) is None:
            break
        extra = separating(widened, again, Jail(tiny_ctx, local_sandbox), round_)
        assert not isinstance(extra, str)
        assert 0 < len(extra.added) <= MAX_ADDED
        assert not any(i.visible for i in extra.added)
        assert all(i.provenance != "traced" for i in extra.added)
        widened = _with(widened, extra)
        again = baseline(widened, Jail(tiny_ctx, local_sandbox))
        assert not isinstance(again, str)
    assert too_weak(again) is None and overpaid(again) is None
    assert again.raw_reward < found.raw_reward
    memorised = widened.hidden.model_copy(update={"baseline": again})
    graded = dataclasses.replace(widened, hidden=memorised)
    verdict = grade_text(
        graded, _table_candidate(task), Jail(tiny_ctx, local_sandbox), shrink=False
    )
    assert verdict.reward == 0.0, verdict


def _table_candidate(task: LoadedTask) -> str:
    """clamp from a table of its visible calls (the tests' literals), else None."""
    table = {
        (5, 0, 10): 5,
        (-3, 0, 10): 0,
        (12, 0, 10): 10,
        (2.5, 1.0, 2.0): 2.0,
    }
    return f"def clamp(value, low, high):\n    return {table!r}.get((value, low, high))\n"


def test_nothing_is_searched_for_a_task_under_the_floor(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    assert task.hidden.baseline is not None and too_weak(task.hidden.baseline) is None
    assert separating(task, task.hidden.baseline, Jail(tiny_ctx, local_sandbox)) == NONE
