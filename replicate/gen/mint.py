"""Minting one task from one target: golden outputs, examples, validation (BRIEF §2)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from replicate import GRADER_VERSION
from replicate.batch.store import LoadedTask, RepoSnapshot
from replicate.core.ids import task_id
from replicate.core.prompt import render_prompt
from replicate.core.records import (
    CallInput,
    Example,
    HiddenTask,
    Source,
    Target,
    TaskSpec,
    Validation,
)
from replicate.gen.golden import Golden, golden, timing_settings
from replicate.gen.harvest import HarvestedCall
from replicate.harness.jail import RepoContext
from replicate.harness.sandbox.base import Sandbox
from replicate.verifiers.compare import render_outcome
from replicate.verifiers.grader import grade_text, original_source, stubbed_source

MIN_HIDDEN_INPUTS = 3
EXAMPLES_FROM = 6  # hold out examples for TASK.md only when at least this many inputs survive
EXAMPLES = 2


@dataclass(frozen=True)
class Minted:
    task: LoadedTask


@dataclass(frozen=True)
class Dropped:
    stage: str
    reason: str


def _examples(g: Golden, target: Target) -> tuple[tuple[Example, ...], tuple[CallInput, ...]]:
    """Hold a few short, returning calls out of the hidden inputs to show them in TASK.md."""
    if len(g.inputs) < EXAMPLES_FROM:
        return (), g.inputs
    shown = [i for i in g.inputs if g.expected[i.index].get("status") == "returned"]
    shown = sorted(shown, key=lambda i: len(i.call) + len(render_outcome(g.expected[i.index])))
    chosen = {i.index for i in shown[:EXAMPLES] if len(i.call) <= 160}
    examples = tuple(
        Example(call=i.call, outcome=render_outcome(g.expected[i.index]))
        for i in g.inputs
        if i.index in chosen
    )
    return examples, tuple(i for i in g.inputs if i.index not in chosen)


def _task(
    repo: RepoSnapshot, repo_dir: str, target: Target, g: Golden, validation: Validation
) -> LoadedTask:
    record = repo.record
    ident = task_id(record.key, record.commit, target.symbol)
    examples, hidden_inputs = _examples(g, target)
    source = Source(repo=record.key, commit=record.commit, path=target.path, symbol=target.symbol)
    spec = TaskSpec(
        id=ident,
        source=source,
        kind=target.kind,
        signature=target.signature,
        docstring=target.docstring,
        examples=examples,
        hidden_inputs=len(hidden_inputs),
        body_statements=target.body_statements,
    )
    hidden = HiddenTask(
        id=ident,
        repo_dir=repo_dir,
        source=source,
        target=target,
        grading=timing_settings(g.max_call_s, g.total_call_s),
        validation=validation,
        grader_version=GRADER_VERSION,
    )
    expected = {i.index: g.expected[i.index] for i in hidden_inputs}
    prompt = render_prompt(target, examples, len(hidden_inputs))
    return LoadedTask(spec, hidden, hidden_inputs, expected, repo, prompt)


def mint_target(
    ctx: RepoContext,
    repo: RepoSnapshot,
    repo_dir: str,
    target: Target,
    calls: Sequence[HarvestedCall],
    sandbox: Sandbox,
) -> Minted | Dropped:
    inputs = [
        CallInput(index=n, origin=c.origin, pickle_b64=c.pickle_b64) for n, c in enumerate(calls)
    ]
    g = golden(ctx, target, inputs, sandbox)
    if g.infra:
        return Dropped("encodable", g.infra)
    if g.encodable == 0:
        return Dropped("encodable", _top(g) or "no input survives")
    if len(g.inputs) < MIN_HIDDEN_INPUTS + (EXAMPLES if len(g.inputs) >= EXAMPLES_FROM else 0):
        return Dropped("deterministic", f"fewer than {MIN_HIDDEN_INPUTS} deterministic inputs")
    pending = Validation(reference_reward=-1.0, stub_reward=-1.0)
    task = _task(repo, repo_dir, target, g, pending)
    reference = grade_text(task, original_source(task).decode("utf-8"), ctx, sandbox)
    stub = grade_text(task, stubbed_source(task).decode("utf-8"), ctx, sandbox)
    if reference.reward != 1.0:
        return Dropped("validated", f"reference scores {reference.reward}: {reference.reason}")
    if stub.reward != 0.0:
        return Dropped("validated", f"stub scores {stub.reward}")
    validation = Validation(
        reference_reward=1.0,
        stub_reward=0.0,
        dropped_nondeterministic=g.drops.get("nondeterministic outcome", 0),
    )
    return Minted(_task(repo, repo_dir, target, g, validation))


def _top(g: Golden) -> str | None:
    common = g.drops.most_common(1)
    return common[0][0] if common else None
