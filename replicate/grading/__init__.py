"""Grading a candidate against a task's hidden inputs and expected outcomes.

`grader` splices the candidate, runs it in the jail and compares each outcome (`compare`) on the
trusted side; `reward` weighs the matches by stratum and normalises against degenerate programs.
"""

from __future__ import annotations

from replicate.grading.class_sequences import SequenceScore, score_sequences, tabled
from replicate.grading.classes import score_members
from replicate.grading.compare import Mismatch, compare_outcome, is_gradable, same_outcome
from replicate.grading.grader import (
    MAX_CANDIDATE_BYTES,
    Refusal,
    grade_text,
    graded_score,
    original_source,
    refused,
    run_candidate,
    run_spliced,
    size_problem,
    stubbed_source,
)
from replicate.grading.javascript import is_script_task, prewarm_script
from replicate.grading.repo_tests import node_ids, run_repo_tests, with_repo_tests
from replicate.grading.reward import (
    DEFAULT_WEIGHTS,
    MAX_BASELINE,
    MAX_CONSTANT_BASELINE,
    MAX_DEGENERATE_REWARD,
    Score,
    matches,
    normalise,
    score,
    score_matches,
)
from replicate.grading.sequences import compare_sequences, failing_prefix

__all__ = [
    "DEFAULT_WEIGHTS",
    "MAX_BASELINE",
    "MAX_CANDIDATE_BYTES",
    "MAX_CONSTANT_BASELINE",
    "MAX_DEGENERATE_REWARD",
    "Mismatch",
    "Refusal",
    "Score",
    "SequenceScore",
    "compare_outcome",
    "compare_sequences",
    "failing_prefix",
    "grade_text",
    "graded_score",
    "is_gradable",
    "is_script_task",
    "matches",
    "node_ids",
    "normalise",
    "original_source",
    "prewarm_script",
    "refused",
    "run_candidate",
    "run_repo_tests",
    "run_spliced",
    "same_outcome",
    "score",
    "score_matches",
    "score_members",
    "score_sequences",
    "size_problem",
    "stubbed_source",
    "tabled",
    "with_repo_tests",
]
