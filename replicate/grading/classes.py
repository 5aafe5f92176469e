"""Grading a class task (task kind `class`): every method of one class is the candidate's, and
each member's hidden inputs run on it.

Until call sequences grade a class (the harvest's recorded sequences, replayed in the jail), a
class task's hidden inputs are its methods' own: each member's recorded and widened inputs, each
with the `self` the tests had (`CallInput.member` names the member).  The candidate's file runs
once per member that has inputs (the runner calls one target a run), and the raw reward is the
mean of the members' raw rewards, each weighted by stratum within the member, so a method with
many inputs does not outweigh one with few.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from replicate.batch import LoadedTask
from replicate.core import CallInput, GradingSettings, Target
from replicate.grading.mismatch import Mismatch
from replicate.grading.reward import Score, score_matches
from replicate.jail import Jail, JailRun, ParsedRun


def is_class_task(task: LoadedTask) -> bool:
    """Whether `task` is graded member by member: a class task, or a module task (whose members
    are its file's functions and methods, `grading/modules.py`)."""
    return task.hidden.target.kind in ("class", "module")


def member_inputs(task: LoadedTask) -> list[tuple[Target, tuple[CallInput, ...]]]:
    """Each member that has hidden inputs, with them, in the order of the inputs."""
    named: dict[str, Target] = {}
    for member in task.hidden.target.members:
        named.setdefault(member.qualname, member)
    groups: dict[str, list[CallInput]] = {}
    for item in task.inputs:
        groups.setdefault(item.member or "", []).append(item)
    unknown = sorted(set(groups) - set(named))
    if unknown:
        raise ValueError(f"{task.id}: hidden inputs of no member of the class: {unknown[0]!r}")
    return [(named[name], tuple(items)) for name, items in groups.items()]


def run_members(
    task: LoadedTask, spliced: bytes, jail: Jail, *, hash_seed: int = 0, again: bool = False
) -> JailRun:
    """The spliced file run on each member's inputs (one run a member), as one run."""
    runs = [
        jail.run(
            member,
            inputs,
            task.hidden.grading,
            override=spliced,
            hash_seed=hash_seed,
            again=again,
        )
        for member, inputs in member_inputs(task)
    ]
    return merged(runs)


def merged(runs: Sequence[JailRun]) -> JailRun:
    """Runs of one file on disjoint inputs as one: every outcome; ready, done and started when
    all were; the first import error; the sandbox result of the first run that did not start,
    else of the first that timed out, else the last."""
    outcomes = {index: outcome for run in runs for index, outcome in run.parsed.outcomes.items()}
    parsed = ParsedRun(
        ready=all(run.parsed.ready for run in runs),
        import_error=next((r.parsed.import_error for r in runs if r.parsed.import_error), None),
        outcomes=outcomes,
        done=all(run.parsed.done for run in runs),
        rejected_frames=sum(run.parsed.rejected_frames for run in runs),
        started=all(run.parsed.started for run in runs),
    )
    telling = [r for r in runs if not r.parsed.started] or [r for r in runs if r.result.timed_out]
    return JailRun(parsed, (telling or list(runs))[0 if telling else -1].result)


def score_members(
    inputs: Sequence[CallInput], found: Sequence[Mismatch | None], settings: GradingSettings
) -> Score:
    """`score_matches` per member, the raw reward their mean; counts summed by stratum, the
    first counterexample in input order."""
    groups: dict[str | None, tuple[list[CallInput], list[Mismatch | None]]] = {}
    for item, mismatch in zip(inputs, found, strict=True):
        group = groups.setdefault(item.member, ([], []))
        group[0].append(item)
        group[1].append(mismatch)
    scores = [score_matches(items, misses, settings) for items, misses in groups.values()]
    whole = score_matches(inputs, found, settings)  # the counts, the first counterexample
    reward = sum(one.reward for one in scores) / len(scores) if scores else 0.0
    return replace(whole, reward=reward)
