"""The memorisation signal on real tasks of the bundled batch (minted from corpus/samplelib):
the original pasted back is all original, a renamed and reformatted copy with other strings
still is, and an independent re-implementation (tests/e2e/alternatives/) clearly is not.

Thresholds from `python bench/copy_signal.py` over the batch's 80 tasks: originals and renamed
copies all scored 1.00; the 15 alternatives 0.00-0.59 (median 0.28).  So a copy at least 0.95
(original), at least 0.8 (renamed: room for a disguise that also edits a statement or two), and
an alternative at most 0.65 and at least 0.35 below its task's renamed copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.copy_signal import measure
from replicate.batch import Batch
from tests.disguise import original_definition, renamed_copy
from tests.e2e.alternatives.samplelib import ALTERNATIVES

REPO_ROOT = Path(__file__).resolve().parents[3]

SYMBOLS = (  # the highest-scoring alternatives among them (chunked, is_prime), and four more
    "samplelib.iterables.chunked",
    "samplelib.numeric.is_prime",
    "samplelib.numeric.gcd_list",
    "samplelib.numeric.collatz_steps",
    "samplelib.text.levenshtein",
    "samplelib.text.rle_encode",
)


@pytest.fixture(scope="module")
def batch() -> Batch:
    return Batch.open(REPO_ROOT, verify=False)


@pytest.mark.parametrize("symbol", SYMBOLS)
def test_recall_ranks_original_copy_and_alternative(batch: Batch, symbol: str) -> None:
    ident = next(i for i in batch.ids if batch.spec(i).source.symbol == symbol)
    task = batch.load(ident)
    span = task.hidden.target.def_span
    original = original_definition(task.original_source(), span.start_line, span.end_line)
    disguised = renamed_copy(original)
    assert disguised != original and "renamed_" in disguised  # the control: it is disguised
    scores = {
        kind: measure(task, text)
        for kind, text in (
            ("original", original),
            ("renamed", disguised),
            ("alternative", ALTERNATIVES[symbol]),
        )
    }
    copies = {kind: found.copy for kind, found in scores.items() if found is not None}
    assert copies["original"] >= 0.95, copies
    assert copies["renamed"] >= 0.8, copies
    assert copies["alternative"] <= 0.65, copies
    assert copies["renamed"] - copies["alternative"] >= 0.35, copies
