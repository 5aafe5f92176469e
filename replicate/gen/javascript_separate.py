"""Inputs that tell a JavaScript task from its degenerate programs, searched before a weak task
is dropped, as a Python task's are (`gen.separate`, docs/design.md §4).

When a degenerate program or a table of the visible calls reaches the floor of its kind
(`gen.baseline.too_weak`), fast-check draws more calls from the task's traced ones (`SEARCH`:
another seed each round) and the determinism gate keeps those the original answers alike
(`gen.javascript_drawn.searched_calls`). Every degenerate program runs on them as a candidate
would (`javascript_baseline.program_matches`); a few that the programs at the floor get wrong,
about as many for each (`gen.separate.balanced`, `MAX_ADDED` in all), join the hidden inputs. The
reference is graded on all of them together, as a candidate is, and the baseline computed
again; up to `SEARCH_ROUNDS` rounds. The task is then kept or dropped on its baseline
(`javascript_baseline.judged`), the drop's detail saying what the search added.
"""

from __future__ import annotations

from dataclasses import replace

from replicate.batch import LoadedTask
from replicate.core import Baseline, DropReason
from replicate.gen import javascript_baseline
from replicate.gen.baseline import behind, reaching_floor, too_weak
from replicate.gen.funnel import STAGES
from replicate.gen.javascript_drawn import (
    Added,
    hidden_input,
    next_index,
    searched_calls,
    with_inputs,
)
from replicate.gen.separate import MAX_ADDED, balanced, level
from replicate.gen.target import SEARCH_ROUNDS, Dropped, separated
from replicate.grading import javascript as graded
from replicate.jail import Sandbox, node_widening

SEARCH = node_widening.Widening(count=200, seed=2)  # round n draws with seed 2 + n


def under_the_floor(
    task: LoadedTask, sandbox: Sandbox, language: str, warm: bool = True
) -> tuple[LoadedTask, Baseline] | Dropped:
    """The task (with any searched inputs added) and its baseline, or why it is dropped; with
    `warm`, the degenerate programs run in warm jails (`javascript_baseline.program_matches`)."""
    found = javascript_baseline.baseline(task, sandbox, warm)
    added = 0
    for round_ in range(SEARCH_ROUNDS):
        if not too_weak(found):
            break
        extra = separating(task, found, sandbox, round_, warm)
        if not extra:
            break
        task = with_inputs(task, extra, language)
        added += len(extra)
        missed = _reference_misses(task, sandbox)
        if missed:
            detail = f"the reference misses {missed} of {len(task.inputs)} inputs"
            return Dropped(STAGES[4], DropReason.SEARCHED_MISS, detail + separated(added))
        found = javascript_baseline.baseline(task, sandbox, warm)
    dropped = javascript_baseline.judged(found, len(task.inputs))
    if dropped is not None:
        tried = separated(added) if reaching_floor(found) or added else ""
        return replace(dropped, detail=dropped.detail + tried)
    return task, found


def separating(
    task: LoadedTask, found: Baseline, sandbox: Sandbox, round_: int = 0, warm: bool = True
) -> Added:
    """Searched calls (with the original's outcomes) that pull the programs reaching the floor
    down; none when there is no such program or no drawn call tells them apart."""
    weak = [behind(p.program) for p in reaching_floor(found)]
    if not weak:
        return ()
    draw = replace(SEARCH, seed=SEARCH.seed + round_)
    searched = searched_calls(task, sandbox, draw)
    if not searched:
        return ()
    start, target = next_index(task), task.hidden.target
    items = tuple(
        (hidden_input(start + n, r, target, generated=True), r.outcome)
        for n, r in enumerate(searched)
    )
    probe = with_inputs(replace(task, inputs=(), expected={}), items, task.spec.language)
    matches = javascript_baseline.program_matches(task, sandbox, on=probe, warm=warm)
    names = [name for name in dict.fromkeys(weak) if name in matches]
    at_floor = len(names)
    names += [name for name in matches if name not in names]
    wrong = [
        frozenset(i.index for i, miss in zip(probe.inputs, matches[name], strict=True) if miss)
        for name in names
    ]
    levels = [level(found, name) * len(task.inputs) for name in names]
    order = [i.index for i in probe.inputs]
    chosen = set(balanced(wrong[:at_floor], order, MAX_ADDED, wrong[at_floor:], levels))
    return tuple((item, outcome) for item, outcome in items if item.index in chosen)


def _reference_misses(task: LoadedTask, sandbox: Sandbox) -> int:
    """How many hidden inputs the reference gets wrong, graded on all of them together."""
    outcomes = graded.run_script(task, sandbox, None)
    return sum(1 for miss in graded.compared(task, outcomes) if miss is not None)
