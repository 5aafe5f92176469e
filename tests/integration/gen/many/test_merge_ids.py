"""Replacing a repository's tasks in a batch removes folders by the names it found, never by
the id a (possibly foreign) hidden task.json claims."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from replicate.batch import store
from replicate.batch.store import HIDDEN, SPECS
from replicate.errors import ReplicateError
from replicate.gen.many.merge import drop_repo
from tests.integration.minted import Tiny, write_files

CLAMP = "tinypkg.core.clamp"


def test_a_claimed_task_id_that_climbs_out_removes_nothing_outside(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch = tiny.copy_batch(tmp_path / "batch")
    victim = write_files(tmp_path / "victim", {"keep.txt": "mine\n"})
    ident = tiny.id_of(CLAMP)
    hidden = batch / HIDDEN / ident / "task.json"
    claimed = os.path.relpath(victim, batch / SPECS)
    hidden.write_text(json.dumps({**json.loads(hidden.read_text()), "id": claimed}))
    with monkeypatch.context() as patch:  # the control: removing by the claimed id, unchecked
        patch.setattr(store.checks, "check_name", lambda *args: None)
        spare = write_files(tmp_path / "spare" / "victim", {"keep.txt": "mine\n"})
        (tmp_path / "spare" / "batch" / SPECS).mkdir(parents=True)
        store.remove_task(tmp_path / "spare" / "batch", "../../victim")
        assert not spare.exists()
    with pytest.raises(ReplicateError, match="task id"):
        store.remove_task(batch, claimed)
    drop_repo(batch, tiny.task(CLAMP).repo.record.key)
    assert (victim / "keep.txt").read_text() == "mine\n"
    assert not (batch / SPECS / ident).exists() and not (batch / HIDDEN / ident).exists()
