"""The memorisation signal of a verdict: how much of the candidate's body is the hidden original's
(docs/design.md §4, Recall).  The task's language adapter finds and tokenises both bodies; the
pure core compares them (`replicate.core.copying.recall`).  Reported beside the reward, never
part of it."""

from __future__ import annotations

import hashlib
import threading

from replicate.batch import LoadedTask
from replicate.core import Recall, Token, Verdict, recall

_KEPT = 4096  # originals' tokens kept (a few KB each): a trainer grades each task many times
_ORIGINALS: dict[tuple[str, bytes], tuple[Token, ...] | None] = {}  # the most recent last
_LOCK = threading.Lock()


def _original_tokens(task: LoadedTask, source: bytes) -> tuple[Token, ...] | None:
    """The original body's tokens, kept by task and by the file's digest."""
    key = (task.id, hashlib.blake2b(source, digest_size=16).digest())
    with _LOCK:
        if key in _ORIGINALS:
            found = _ORIGINALS.pop(key)
            _ORIGINALS[key] = found
            return found
    found = task.language().body_tokens(source, task.hidden.target)
    with _LOCK:
        _ORIGINALS[key] = found
        while len(_ORIGINALS) > _KEPT:
            del _ORIGINALS[next(iter(_ORIGINALS))]
    return found


def recalled(task: LoadedTask, spliced: bytes) -> Recall | None:
    """`Recall` of the target's body in `spliced` against the original's; None where either
    body cannot be read (the spliced file holds no definition of the target)."""
    source = task.original_source()
    original = _original_tokens(task, source)
    stubbed = task.language().stub(source, task.hidden.target)
    candidate = task.language().body_tokens(spliced, task.hidden.target, stubbed)
    if original is None or candidate is None:
        return None
    return recall(candidate, original)


def with_recall(verdict: Verdict, task: LoadedTask, spliced: bytes | None) -> Verdict:
    """`verdict` with `copy` and `copy_run` filled in where the candidate spliced."""
    found = None if spliced is None else recalled(task, spliced)
    if found is None:
        return verdict
    return verdict.model_copy(update={"copy_share": found.copy, "copy_run": found.run})
