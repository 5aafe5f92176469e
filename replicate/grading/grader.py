"""Grade one candidate for one task: splice, run in the jail, compare on the trusted side.

One splicing rule serves every entry point (`replicate grade`, `replicate run`, gen-time
validation): the candidate text is spliced into the stubbed target file (docs/design.md §1), the
result is mounted over the target file of a pristine tree, and the runner calls it on the hidden
inputs.
Expected outputs never enter the candidate's process; comparison happens here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from replicate import GRADER_VERSION
from replicate.batch import LoadedTask
from replicate.core import MAX_CANDIDATE_BYTES, SpliceError, Verdict, VerdictStatus
from replicate.grading.class_sequences import (
    SequenceScore,
    combined,
    replay_candidate,
    score_sequences,
    sequence_counterexample,
    sequence_reason,
    steadied,
)
from replicate.grading.classes import is_class_task, run_members, score_members
from replicate.grading.javascript import is_script_task
from replicate.grading.javascript_shrink import shrink_script
from replicate.grading.javascript_verdict import ScriptGrade, grade_twice
from replicate.grading.mismatch import Mismatch
from replicate.grading.recall import with_recall
from replicate.grading.reward import Score, normalise, score_matches
from replicate.grading.shrink import shrink_counterexample
from replicate.grading.stability import Compared, compared, flipped, rescued, unstable_reason
from replicate.jail import Jail, JailRun, Replay, compile_candidate


def size_problem(candidate: str) -> str | None:
    """Why a candidate is too big to grade, or None."""
    size = len(candidate.encode("utf-8", errors="surrogatepass"))
    if size > MAX_CANDIDATE_BYTES:
        return f"candidate larger than {MAX_CANDIDATE_BYTES} bytes ({size})"
    return None


def refused(task: LoadedTask, reason: str) -> Verdict:
    """The verdict on a candidate that is not run at all: reward 0, with the reason."""
    verdict = _verdict(task, time.monotonic(), 0.0, "graded", reason)
    return verdict.model_copy(update={"raw_reward": 0.0})


def original_source(task: LoadedTask) -> bytes:
    return task.original_source()


def stubbed_source(task: LoadedTask) -> bytes:
    return task.stubbed_source()


def _verdict(
    task: LoadedTask, started: float, reward: float | None, status: VerdictStatus, reason: str
) -> Verdict:
    return Verdict(
        task_id=task.id,
        reward=reward,
        status=status,
        reason=reason,
        grader_version=GRADER_VERSION,
        duration_s=round(time.monotonic() - started, 3),
    )


def _syntax_problem(source: bytes, path: str) -> str | None:
    problem = compile_candidate(source, path).problem
    return f"candidate does not parse: {problem}" if problem is not None else None


@dataclass(frozen=True)
class Attempt:
    """A candidate spliced into the target file and run on the hidden inputs (and, a class
    task's, its call sequences replayed: `replays`)."""

    spliced: bytes
    run: JailRun
    replays: tuple[Replay, ...] = ()


@dataclass(frozen=True)
class Refusal:
    """Why a candidate could not be run (a verdict without a run); `spliced`: the target file
    it made, where it spliced (its body is still compared with the original's)."""

    reward: float | None
    status: VerdictStatus
    reason: str
    spliced: bytes | None = None


def run_candidate(
    task: LoadedTask,
    candidate: str,
    jail: Jail,
    *,
    hash_seed: int = 0,
) -> Attempt | Refusal:
    """Splice the candidate text into the stubbed file and run it on the hidden inputs."""
    target = task.hidden.target
    too_big = size_problem(candidate)
    if too_big:
        return Refusal(0.0, "graded", too_big)
    try:
        spliced = task.language().splice(stubbed_source(task), candidate, target, check=False)
    except SpliceError as exc:
        return Refusal(0.0, "graded", f"candidate rejected: {exc}")
    inside = str(jail.ctx.tree / target.path)  # the one compile, of the bytes the jail runs
    problem = _syntax_problem(spliced, inside)
    if problem:
        return Refusal(0.0, "graded", problem, spliced)
    return run_spliced(task, spliced, jail, hash_seed=hash_seed)


def run_spliced(
    task: LoadedTask,
    spliced: bytes,
    jail: Jail,
    *,
    hash_seed: int = 0,
    again: bool = False,
) -> Attempt | Refusal:
    """Run an already spliced target file on the hidden inputs (as a child of a sealed session
    when `jail` has candidate sessions, else in a jail started ahead of time when it has a warm
    pool and the sandbox can; see `Jail.run`).  `again`: the determinism check's second run."""
    hidden = task.hidden
    if is_class_task(task):  # each member's inputs, a run a member (`grading.classes`)
        run = run_members(task, spliced, jail, hash_seed=hash_seed, again=again)
    else:
        run = jail.run(
            hidden.target,
            task.inputs,
            hidden.grading,
            override=spliced,
            hash_seed=hash_seed,
            again=again,
        )
    infra = run.infra_problem()
    if infra:
        return Refusal(None, "infra_error", infra, spliced)
    if run.parsed.import_error is not None:
        reason = f"candidate module fails to import: {run.parsed.import_error}"
        return Refusal(0.0, "graded", reason, spliced)
    replays = replay_candidate(task, spliced, jail, hash_seed=hash_seed, again=again)
    if isinstance(replays, str):
        return Refusal(None, "infra_error", replays, spliced)
    return Attempt(spliced, run, replays)


def _second_run(
    task: LoadedTask,
    found: Attempt,
    first: Compared,
    jail: Jail,
    hash_seed: int,
) -> Refusal | tuple[Compared, SequenceScore | None]:
    """Grade again (docs/design.md §4 and §5, item 17): a Refusal when passes come and go between
    the two runs (of inputs, or of a class task's call sequences), else the second run,
    compared, and a class task's sequences scored on both (`steadied`)."""
    again = run_spliced(task, found.spliced, jail, hash_seed=hash_seed, again=True)
    if isinstance(again, Refusal):
        if again.status == "infra_error":
            return again
        return Refusal(0.0, "graded", f"nondeterministic: in a second run, {again.reason}")
    second = compared(task.inputs, task.expected, again.run.parsed.outcomes, task.hidden.grading)
    flips = flipped(task.inputs, first, second)
    if flips:
        return Refusal(0.0, "graded", unstable_reason(flips, len(task.inputs)))
    moved, sequences = steadied(task, found.replays, again.replays)
    if moved:
        reason = f"nondeterministic: {moved} call sequences pass in one run and fail in the other"
        return Refusal(0.0, "graded", reason)
    return second, sequences


def grade_text(
    task: LoadedTask,
    candidate: str,
    jail: Jail,
    *,
    hash_seed: int = 0,
    shrink: bool = True,
) -> Verdict:
    """Grade candidate text (a whole target file or a bare definition) against the task.

    The reward is the raw (stratum-weighted) match rate normalised against the task's baseline
    (`replicate.grading.reward`).  A candidate that earned anything is run a second time with
    the same hash seed; if some input passes in one run and fails in the other, it earns 0
    (`replicate.grading.stability`).  With `shrink`, a counterexample on a generated input is
    shrunk against the reference (`replicate.grading.shrink`, a few seconds at most).
    When `jail` has candidate sessions, the candidate's runs are children of sealed sessions
    (`CandidateSessions`), else with a warm pool they use jails started ahead of time
    (`WarmPool`); the verdict is the same, only the process start is off the critical path.
    """
    started = time.monotonic()
    if is_script_task(task):
        return _graded_script(task, candidate, jail, started, shrink)
    found = run_candidate(task, candidate, jail, hash_seed=hash_seed)
    if isinstance(found, Refusal):
        verdict = _verdict(task, started, found.reward, found.status, found.reason)
        verdict = verdict.model_copy(update={"raw_reward": found.reward})
        return with_recall(verdict, task, found.spliced)
    verdict = _graded(task, found, jail, started, hash_seed=hash_seed, shrink=shrink)
    return with_recall(verdict, task, found.spliced)


def _graded_script(
    task: LoadedTask, candidate: str, jail: Jail, started: float, shrink: bool
) -> Verdict:
    """A JavaScript/TypeScript candidate's verdict (`grading.javascript_verdict`): the raw share
    of matches normalised against the task's baseline, run a second time when it earned anything
    (warm Node jails where `jail` has a pool), with its memorisation signal; with `shrink`, a
    counterexample on a generated input shrunk (`grading.javascript_shrink`)."""
    problem = size_problem(candidate)
    found = (
        ScriptGrade(None, problem)
        if problem
        else grade_twice(task, candidate, jail.sandbox, jail.pool)
    )
    scored = found.score
    if scored is None:
        verdict = _verdict(task, started, 0.0, "graded", found.refused)
        return with_recall(verdict.model_copy(update={"raw_reward": 0.0}), task, found.spliced)
    total, missed = len(task.inputs), scored.mismatches
    reason = (
        f"all {total} hidden inputs match"
        if not missed
        else f"{missed} of {total} hidden inputs differ"
    )
    base = task.hidden.baseline.raw_reward if task.hidden.baseline else None
    reward = round(normalise(scored.reward, base), 6)
    verdict = _verdict(task, started, reward, "graded", reason)
    update = {"raw_reward": round(scored.reward, 6), "counts": scored.counts}
    example = scored.counterexample
    if shrink and example is not None and found.spliced is not None:
        example = shrink_script(task, found.spliced, example, jail.sandbox)
    verdict = verdict.model_copy(update={**update, "counterexample": example})
    return with_recall(verdict, task, found.spliced)


def _graded(
    task: LoadedTask, found: Attempt, jail: Jail, started: float, *, hash_seed: int, shrink: bool
) -> Verdict:
    """The verdict on a candidate that ran: compared, run again if it earned anything, its
    counterexample shrunk."""
    run = found.run
    first = compared(task.inputs, task.expected, run.parsed.outcomes, task.hidden.grading)
    sequences = score_sequences(task, found.replays)  # a class task's, None without
    result, raw = graded_score(task, first.misses, sequences)
    base = task.hidden.baseline.raw_reward if task.hidden.baseline else None
    if normalise(raw, base) > 0:
        again = _second_run(task, found, first, jail, hash_seed)
        if isinstance(again, Refusal):
            verdict = _verdict(task, started, again.reward, again.status, again.reason)
            raw_reward = None if again.reward is None else round(raw, 6)
            return verdict.model_copy(update={"raw_reward": raw_reward, "counts": result.counts})
        second, sequences = again
        result, raw = graded_score(task, rescued(task.inputs, first, second), sequences)
    reward = round(normalise(raw, base), 6)
    reason = _reason(result.mismatches, len(task.inputs), run.result.timed_out, run.parsed.ready)
    example = result.counterexample
    # a class task's member counterexample is not shrunk: its call sequences' are
    if shrink and not is_class_task(task) and example and result.first_mismatch is not None:
        example = shrink_counterexample(
            task, result.first_mismatch, example, found.spliced, jail.cold()
        )
    if sequences is not None:
        reason += sequence_reason(sequences)
        if example is None:  # every member's input matches: a sequence's prefix, shrunk
            example = sequence_counterexample(
                task, sequences, found.spliced, jail.cold(), shrink=shrink
            )
    verdict = _verdict(task, started, reward, "graded", reason)
    return verdict.model_copy(
        update={
            "raw_reward": round(raw, 6),
            "counts": result.counts,
            "counterexample": example,
        }
    )


def graded_score(
    task: LoadedTask, misses: Sequence[Mismatch | None], sequences: SequenceScore | None
) -> tuple[Score, float]:
    """The score on the hidden inputs of outcomes that left `misses` (a class or module task's
    by member, `score_members`), and the raw reward with the call sequences' score (`combined`;
    None: the task has none): what a candidate earns, and a degenerate program at gen."""
    scored = score_members if is_class_task(task) else score_matches
    result = scored(task.inputs, misses, task.hidden.grading)
    return result, combined(result.reward, sequences)


def _reason(mismatches: int, total: int, timed_out: bool, ready: bool) -> str:
    if not ready:
        return "candidate process died while importing"
    if mismatches == 0:
        return f"all {total} hidden inputs match"
    tail = "; the run hit its time limit" if timed_out else ""
    return f"{mismatches} of {total} hidden inputs differ{tail}"
