"""The mark of a batch `replicate gen` is still writing: `DIR/minting.json`.

`gen` writes each task as soon as it is minted and the manifest only at the end, so while it runs
(or after it was killed) the manifest does not cover the newest tasks. The mark is made when
`gen` starts changing the batch and removed once the manifest is written; while it is there, a
reader that verifies the batch refuses it in one line that says how to finish it (run the same
`gen` again: it resumes) or use the finished tasks as they are (`--no-verify`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from replicate import confined
from replicate.errors import ReplicateError

MARK = "minting.json"


def begin(root: Path, repo: str) -> bool:
    """Mark the batch at `root` as being minted from `repo`; False if it was marked already."""
    existed = is_marked(root)
    root.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"minting": repo, "pid": os.getpid()}) + "\n"
    confined.write_bytes(root, MARK, text.encode())
    return not existed


def finish(root: Path) -> None:
    """The batch is whole again (its manifest written): remove the mark."""
    (root / MARK).unlink(missing_ok=True)


def is_marked(root: Path) -> bool:
    return (root / MARK).is_file() or (root / MARK).is_symlink()


def check_finished(root: Path, tasks: int) -> None:
    """A one-line refusal of a batch `gen` has not finished."""
    if is_marked(root):
        raise ReplicateError(
            f"{root}: `replicate gen` has not finished this batch ({tasks} task(s) written so "
            "far; it is still running, or it was stopped): run the same `replicate gen` again "
            "to resume it, or pass --no-verify to use the tasks written so far"
        )
