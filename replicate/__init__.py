"""replicate: turn real software into replication-training tasks and grade coding agents."""

from __future__ import annotations

__version__ = "0.1.0"
# Recorded on every minted task and verdict; rewards of different versions are not comparable.
# /2: strata weighted, normalised against degenerate programs and a table of the visible calls;
#     mutant kill rate recorded; the runner unpickles all inputs before the first call.
# /3: a method's `self` is varied through the class call that built it (recipe/2 inputs).
# /4: a baseline of 1 pays 0 (it paid the raw reward); the tables of the visible calls hold only
#     the calls made from test code or a doctest, and count against the floor at gen time.
GRADER_VERSION = "replicate-grader/4"

__all__ = ["GRADER_VERSION", "__version__"]
