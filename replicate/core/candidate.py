"""What every language's splicing promises its callers: a size limit and one error type.

A candidate is what an agent or a model hands in for a target (the target file as a workspace
leaves it, a file given to `replicate grade`, a completion); the language adapter puts it into
the stubbed file (`Language.splice`). These two names are the language-neutral part.
"""

from __future__ import annotations

# The largest candidate any entry point grades: bigger ones get reward 0 before anything parses.
MAX_CANDIDATE_BYTES = 2_000_000


class SpliceError(ValueError):
    """A candidate that cannot be put into the target file; `reason` is one line for a verdict."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
