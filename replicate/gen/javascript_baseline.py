"""A JavaScript/TypeScript task's degenerate baseline at gen, as a Python task's
(`gen.baseline`, docs/design.md §4): each degenerate program of `gen.javascript_families` is
spliced into the stubbed file and graded through the path a candidate takes
(`grading.javascript.run_file`: parsed, run on the hidden inputs in one jailed Node process,
compared with `compare_node`, scored by `reward.score_matches`), and beside each a lookup table
of the visible calls that behaves like it on every other input.

The visible calls are the recorded calls the test file made itself (the recorder reads the
caller's file off V8's stack), which stay in the agent's workspace: not those the library made
while a test ran, as Python's baseline counts only a test's own calls; a table answers them
exactly, its matches there are what the expected outcome compared with itself
gives, and elsewhere its program's. The best raw reward among
programs and tables is the task's `Baseline`; a verdict's reward is normalised against it
(`reward.normalise`). The task is dropped as a Python one is: with `DEGENERATE_AT_FLOOR` when a
program or table reaches the floor of its kind (`gen.baseline.too_weak`), with
`DEGENERATE_OVERPAID` when one would earn more than `MAX_DEGENERATE_REWARD` normalised, and with
`DEGENERATE_ORIGINAL` when a program (not a table) matches the original on every input. Before a
weak task is dropped, inputs that tell it from its degenerate programs are searched
(`gen.javascript_separate`).
"""

from __future__ import annotations

from collections.abc import Mapping

from replicate.batch import LoadedTask
from replicate.core import Baseline, DegenerateScore, DropReason
from replicate.gen import javascript_families as families
from replicate.gen.baseline import VISIBLE, overpaid, ranked, too_weak, visible, weak_detail
from replicate.gen.families import Program
from replicate.gen.funnel import STAGES
from replicate.gen.target import Dropped
from replicate.grading import Mismatch, score_matches
from replicate.grading import javascript as graded
from replicate.jail import Sandbox, node

Matches = list[Mismatch | None]


def programs(task: LoadedTask) -> list[Program]:
    """The task's degenerate programs (`javascript_families.programs`)."""
    target = task.hidden.target
    names = families.parameter_names(task.original_source(), target)
    expected = [node.read_outcome(task.expected[item.index]) for item in task.inputs]
    return families.programs(target, names, expected)


def program_matches(
    task: LoadedTask, sandbox: Sandbox, on: LoadedTask | None = None, warm: bool = True
) -> dict[str, Matches]:
    """Each degenerate program's matches on the hidden inputs (of `on`, the task with other
    inputs, when given), graded as a candidate is; one that does not parse or load matches
    none. With `warm`, each program's jail is started while the one before runs
    (`grading.javascript.warm_series`)."""
    stubbed = task.stubbed_source()
    probe = on or task
    found: dict[str, Matches] = {}
    listed = programs(task)
    with graded.warm_series(probe, sandbox, len(listed) if warm else 0) as pool:
        for program in listed:
            spliced = families.program_file(stubbed, task.hidden.target, program.body)
            outcomes = graded.run_file(probe, spliced, sandbox, pool)
            if isinstance(outcomes, str):
                found[program.name] = [Mismatch("status", "", "", outcomes)] * len(probe.inputs)
            else:
                found[program.name] = graded.compared(probe, outcomes)
    return found
    return found


def summarise(task: LoadedTask, found: Mapping[str, Matches]) -> Baseline:
    """Each program's raw reward and that of a table of the visible calls in front of it, best
    first; the best is the baseline."""
    shown = {
        item.index: graded.compare_node(
            node.read_outcome(task.expected[item.index]),
            node.read_outcome(task.expected[item.index]),
        )
        for item in task.inputs
        if visible(item)
    }
    scores = []
    for name, matched in found.items():
        table = [
            shown.get(item.index, miss) for item, miss in zip(task.inputs, matched, strict=True)
        ]
        for program, graded_matches in ((name, matched), (f"{VISIBLE} {name}", table)):
            reward = score_matches(task.inputs, graded_matches, task.hidden.grading).reward
            scores.append(DegenerateScore(program=program, raw_reward=reward))
    best = ranked(scores)
    return Baseline(raw_reward=best[0].raw_reward if best else 0.0, programs=tuple(best))


def baseline(task: LoadedTask, sandbox: Sandbox, warm: bool = True) -> Baseline:
    return summarise(task, program_matches(task, sandbox, warm=warm))


def judged(found: Baseline, inputs: int) -> Dropped | None:
    """Why a task of `inputs` hidden inputs is dropped on its baseline (Python's reasons), or
    None."""
    same = _same_as_original(found, inputs)
    if same:
        return Dropped(STAGES[4], DropReason.DEGENERATE_ORIGINAL, same)
    why = too_weak(found) or overpaid(found)
    return Dropped(STAGES[4], why, weak_detail(found)) if why else None


def _same_as_original(found: Baseline, inputs: int) -> str | None:
    alike = [p.program for p in found.programs if p.raw_reward >= 1.0]
    program = next((name for name in alike if not name.startswith(VISIBLE)), None)
    if program is None:
        return None
    return f"{program} matches it on all {inputs} inputs"
