"""Reward functions for training frameworks (verl, TRL, OpenRLHF), graded in the jail.

Importing a module here does nothing but define functions: the batch, the sandbox and each
repository's environment are opened on the first call and kept for the life of the process.
"""

from __future__ import annotations

from replicate.integrations.grading import (
    Grader,
    GraderRecipe,
    extra_logs,
    infra_verdict,
    recall_extras,
    reward_of,
)

__all__ = ["Grader", "GraderRecipe", "extra_logs", "infra_verdict", "recall_extras", "reward_of"]
