"""A batch `gen` has not finished is refused, in one line, by every reader that verifies it."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.batch import minting
from replicate.batch.store import Batch
from replicate.batch.validate import check_batch
from replicate.errors import ReplicateError
from tests.integration.minted import Tiny, run_cli


def test_a_marked_batch_is_refused_until_gen_finishes(tiny: Tiny, tmp_path: Path) -> None:
    batch = tiny.copy_batch(tmp_path / "batch")
    assert Batch.open(batch).ids  # positive control: the same batch, unmarked, opens
    assert minting.begin(batch, "somewhere")
    assert not minting.begin(batch, "somewhere")  # marked already (a resumed gen)
    for read in (Batch.open, check_batch):
        with pytest.raises(ReplicateError, match="has not finished this batch") as caught:
            read(batch)
        assert "\n" not in str(caught.value) and "4 task(s) written so far" in str(caught.value)
    assert Batch.open(batch, verify=False).ids == Batch.open(tiny.batch_dir).ids
    done = run_cli("validate", "--tasks", str(batch))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "replicate gen" in done.stderr
    minting.finish(batch)
    assert Batch.open(batch).ids
