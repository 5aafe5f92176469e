"""What every folder-based format shows a model: the workspace files and the instruction.

The workspace is the one `replicate run` gives an agent, without its git history: the pristine
tree at the pinned commit with only the target's body stubbed, and TASK.md at its root.  Symbolic
links of the snapshot are skipped (a link could point anywhere on the machine that reads it).
"""

from __future__ import annotations

from pathlib import Path

from replicate import confined
from replicate.agents import PROMPT_NAME
from replicate.batch import LoadedTask


def write_workspace(task: LoadedTask, dest: Path) -> Path:
    """The stubbed tree and TASK.md at `dest` (created; it must not exist yet)."""
    dest.mkdir(parents=True)
    for rel in confined.regular_files(task.repo.tree):
        confined.write_bytes(dest, rel, confined.read_bytes(task.repo.tree, rel))
    confined.write_bytes(dest, task.hidden.target.path, task.stubbed_source())
    confined.write_bytes(dest, PROMPT_NAME, task.prompt.encode("utf-8"))
    return dest


def instruction_text(task: LoadedTask, workdir: str) -> str:
    """TASK.md, and where the repository is."""
    target = task.hidden.target.path
    return (
        task.prompt.rstrip()
        + "\n\n## Where\n\n"
        + f"The repository is in `{workdir}` (this file is its `{PROMPT_NAME}`). Edit "
        + f"`{target}` there, in place: that file is all that is graded.\n"
    )
