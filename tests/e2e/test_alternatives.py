"""No false negatives: correct re-implementations that differ from the originals earn 1.0.

The alternatives (tests/e2e/alternatives/) are hand-written, structurally different bodies with the
originals' contracts. Each is graded by the real grader in the local sandbox on its task's hidden
inputs, which must reach beyond the traced ones (widened and edge inputs), on two batches: the
bundled batch committed at the repository root (minted from corpus/samplelib) and more-itertools
10.5.0 (minted once per session, tests/e2e/conftest.py).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from replicate.batch.store import Batch
from replicate.cache import cache_root
from replicate.grading.grader import grade_text
from replicate.jail import Jail
from replicate.jail.context import context_for
from replicate.sandbox import get_sandbox
from tests.e2e.alternatives import more_itertools as more_itertools_alternatives
from tests.e2e.alternatives import samplelib as samplelib_alternatives
from tests.e2e.conftest import REPO_ROOT

PER_BATCH = 10  # alternatives that must exist (as tasks) in each batch
MIN_GENERATED = 5  # hidden inputs beyond the traced ones, per task
ALTERNATIVES = {
    "bundled": samplelib_alternatives.ALTERNATIVES,
    "more_itertools": more_itertools_alternatives.ALTERNATIVES,
}
CASES = [(which, symbol) for which, table in ALTERNATIVES.items() for symbol in table]


def batch_root(which: str, request: pytest.FixtureRequest) -> Path:
    if which == "bundled":
        return REPO_ROOT
    root: Path = request.getfixturevalue(which).batch
    return root


@cache
def symbols(root: Path) -> dict[str, str]:
    """Task id by target symbol."""
    batch = Batch.open(root)
    return {batch.spec(ident).source.symbol: ident for ident in batch.ids}


@pytest.mark.parametrize("which", sorted(ALTERNATIVES))
def test_enough_alternatives_per_batch(which: str, request: pytest.FixtureRequest) -> None:
    found = set(symbols(batch_root(which, request)))
    present = sorted(set(ALTERNATIVES[which]) & found)
    missing = sorted(set(ALTERNATIVES[which]) - found)
    assert len(present) >= PER_BATCH, (present, missing)
    assert not missing, f"alternatives whose task is not in the batch: {missing}"


@pytest.mark.parametrize(("which", "symbol"), CASES, ids=[f"{w}:{s}" for w, s in CASES])
def test_correct_alternative_scores_one(
    which: str, symbol: str, request: pytest.FixtureRequest
) -> None:
    root = batch_root(which, request)
    task = Batch.open(root).load(symbols(root)[symbol])
    generated = [i for i in task.inputs if i.provenance != "traced"]
    assert len(generated) >= MIN_GENERATED, f"{symbol}: {len(generated)} generated inputs"
    ctx = context_for(task.repo, cache_root())
    verdict = grade_text(task, ALTERNATIVES[which][symbol], Jail(ctx, get_sandbox("local")))
    shown = {"alternative": symbol, "reward": verdict.reward, "copy": verdict.copy_share}
    print(json.dumps({**shown, "inputs": len(task.inputs)}))
    assert verdict.status == "graded", verdict.reason
    assert verdict.reward == 1.0, (verdict.reason, verdict.counterexample)
    # full reward without recall: the memorisation signal sees a re-implementation (at most
    # 0.67 over both batches, bench/copy_signal.py), not the original (1.0)
    assert verdict.copy_share is not None and verdict.copy_share <= 0.7, verdict.copy_share
