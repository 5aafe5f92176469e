"""The memorisation signal of a verdict: how much of the candidate's body is the hidden original's
(docs/design.md §4, Recall).  The task's language adapter finds and tokenises both bodies; the
pure core compares them (`replicate.core.copying.recall`).  Reported beside the reward, never
part of it."""

from __future__ import annotations

from replicate.batch import LoadedTask
from replicate.core import Recall, Verdict, recall


def recalled(task: LoadedTask, spliced: bytes) -> Recall | None:
    """`Recall` of the target's body in `spliced` against the original's; None where either
    body cannot be read (the spliced file holds no definition of the target)."""
    language, target = task.language(), task.hidden.target
    original = language.body_tokens(task.original_source(), target)
    candidate = language.body_tokens(spliced, target, task.stubbed_source())
    if original is None or candidate is None:
        return None
    return recall(candidate, original)


def with_recall(verdict: Verdict, task: LoadedTask, spliced: bytes | None) -> Verdict:
    """`verdict` with `copy` and `copy_run` filled in where the candidate spliced."""
    found = None if spliced is None else recalled(task, spliced)
    if found is None:
        return verdict
    return verdict.model_copy(update={"copy_share": found.copy, "copy_run": found.run})
