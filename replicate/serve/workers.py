"""What runs in the server's grading processes: each opens the batch's grader once, then grades
(and decodes large bodies) one request at a time, its CPU apart from the event loop's process.

Everything here is called by a ProcessPoolExecutor with picklable arguments (a recipe, a task id
and a candidate, a body's bytes); a process started with `spawn` imports this module afresh.
"""

from __future__ import annotations

import atexit
import signal
from typing import TypeVar

from replicate.core import Verdict
from replicate.integrations import Grader, GraderRecipe
from replicate.serve.body import GradeBody, RewardBody

Body = TypeVar("Body", GradeBody, RewardBody)
_GRADERS: list[Grader] = []  # this process's grader, once `start` opened it


def start(recipe: GraderRecipe) -> None:
    """Open the process's grader (its warm jails stopped at exit). Ctrl-C reaches the whole
    process group: the server stops its pool itself, so the workers leave it to."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    grader = recipe.open()
    atexit.register(grader.close)
    _GRADERS.append(grader)


def prepare() -> list[str]:
    """Load what grading needs now (environments come from the cache the server built)."""
    return _GRADERS[0].prepare()


def grade(task_id: str, candidate: str) -> Verdict:
    return _GRADERS[0].grade(task_id, candidate)


def decode(kind: type[Body], data: bytes | bytearray, bound: int) -> Body:
    """The fields `kind` needs from a body (bytes in, those few fields out: a 10 MB id comes
    back as a prefix, not copied whole into the server again)."""
    return kind.of(data, bound)
