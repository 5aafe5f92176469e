"""What an export shows each task's model, which hidden bodies that shows, and each task's split.

Every task of the batch is read (not only those exported): its hidden body is what a prompt must
be searched for, and with `--context signatures` what the prompt leaves out.  A row's
`visible_task_ids` come from searching the row's prompt; a folder format's from searching the
files of its workspace (the repository, as `replicate run` shows it) and its instruction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from replicate import confined
from replicate.batch import Batch, LoadedTask
from replicate.core import Span, prompt, prompt_lengths, splits, visibility
from replicate.exporters.base import ExportOptions
from replicate.exporters.workspace import instruction_text

MAX_SEARCHED_BYTES = 2_000_000  # a workspace file larger than this is not searched


@dataclass(frozen=True)
class PlannedTask:
    """One exported task: the prompt (rows) or instruction (folders) its model reads first, the
    tasks whose hidden bodies it is shown, and where the split put it."""

    task: LoadedTask
    text: str
    visible: tuple[str, ...]
    placement: splits.Placement


@dataclass(frozen=True)
class ExportPlan:
    tasks: tuple[PlannedTask, ...]
    context: prompt.Context
    lengths: prompt_lengths.PromptLengths

    def split_counts(self) -> dict[str, int]:
        """Tasks per split, by split name."""
        counts: dict[str, int] = {}
        for item in self.tasks:
            counts[item.placement.split] = counts.get(item.placement.split, 0) + 1
        return dict(sorted(counts.items()))


def body_text(task: LoadedTask) -> str:
    """The target's original body (hidden: the trusted side only)."""
    return _span_text(task, task.hidden.target.body_span)


def hidden_bodies(task: LoadedTask) -> tuple[str, ...]:
    """What the task hides, body by body: a class task's, each member's (a text that shows
    one member's body shows part of its answer); another task's, its one body."""
    members = task.hidden.target.members
    if members:
        return tuple(_span_text(task, member.body_span) for member in members)
    return (body_text(task),)


def _span_text(task: LoadedTask, span: Span) -> str:
    return task.original_source()[span.start_byte : span.end_byte].decode("utf-8", "replace")


def shown_file(task: LoadedTask, context: prompt.Context, every: Sequence[LoadedTask]) -> str:
    """The part of the target file a row's prompt shows under `context`."""
    language, target = task.language(), task.hidden.target
    if context is prompt.Context.SIGNATURES:
        others = tuple(
            other.hidden.target
            for other in every
            if other.id != task.id
            and other.hidden.repo_dir == task.hidden.repo_dir
            and other.hidden.target.path == target.path
        )
        data = language.stub_bodies(task.original_source(), target, others)
    elif context is prompt.Context.CLASS and target.kind != "module":  # a module's: the file
        data = language.outline(task.original_source(), target)
    else:
        data = task.stubbed_source()
    return data.decode("utf-8", errors="replace")


def row_prompt(task: LoadedTask, context: prompt.Context, every: Sequence[LoadedTask]) -> str:
    target = task.hidden.target
    shown = shown_file(task, context, every)
    header = target.kind if target.kind in ("class", "module") else "def"
    return prompt.render_row_prompt(
        task.prompt, target.path, target.qualname, shown, context, header, task.spec.language
    )


class _WorkspaceSearch:
    """What a task's workspace shows: each repository file searched once, the target file
    (stubbed, so different per task) and the instruction per task."""

    def __init__(self, index: visibility.BodyIndex) -> None:
        self.index = index
        self._files: dict[str, dict[str, frozenset[str]]] = {}

    def _repository(self, task: LoadedTask) -> dict[str, frozenset[str]]:
        key = task.hidden.repo_dir
        if key not in self._files:
            found = {}
            for rel in confined.regular_files(task.repo.tree):
                data = confined.read_bytes(task.repo.tree, rel)
                if len(data) <= MAX_SEARCHED_BYTES:
                    found[rel] = self.index.found_in(data.decode("utf-8", errors="replace"))
            self._files[key] = found
        return self._files[key]

    def visible(self, task: LoadedTask, instruction: str) -> tuple[str, ...]:
        target = task.hidden.target.path
        seen: set[str] = set()
        for rel, ids in self._repository(task).items():
            if rel != target:
                seen |= ids
        own = [task.stubbed_source().decode("utf-8", errors="replace"), instruction, task.prompt]
        return tuple(sorted((seen | set(self.index.visible(own, task.id))) - {task.id}))


def plan_export(
    batch: Batch, task_ids: Sequence[str], options: ExportOptions, *, workdir: str | None
) -> ExportPlan:
    """The plan of an export of `task_ids`; `workdir`: a folder format's, whose model is shown
    the whole repository there (None: rows, whose model is shown the prompt)."""
    every = [batch.load(task_id) for task_id in batch.ids]
    by_id = {task.id: task for task in every}
    chosen = [by_id[task_id] for task_id in task_ids]
    index = visibility.BodyIndex({task.id: hidden_bodies(task) for task in every})
    search = _WorkspaceSearch(index)
    prompts: dict[str, str] = {}
    visible: dict[str, tuple[str, ...]] = {}
    for task in chosen:
        if workdir is not None:
            prompts[task.id] = instruction_text(task, workdir)
            visible[task.id] = search.visible(task, prompts[task.id])
        else:
            prompts[task.id] = row_prompt(task, options.context, every)
            visible[task.id] = index.visible([prompts[task.id]], task.id)
    placements = _placements(chosen, visible, options)
    planned = tuple(
        PlannedTask(task, prompts[task.id], visible[task.id], placements[task.id])
        for task in chosen
    )
    measured = prompt_lengths.measure([len(item.text) for item in planned])
    return ExportPlan(planned, options.context, measured)


def _placements(
    chosen: Sequence[LoadedTask], visible: dict[str, tuple[str, ...]], options: ExportOptions
) -> dict[str, splits.Placement]:
    if options.split_by is None:
        return {task.id: splits.Placement(options.split, "") for task in chosen}
    by: splits.SplitBy = options.split_by
    keys = {
        task.id: splits.group_key(by, task.spec.source.repo, task.hidden.target.path)
        for task in chosen
    }
    return splits.assign(keys, visible, options.test_ratio, options.split_seed)
