"""The ledger a resumed `gen` reads: which outcomes count, torn lines, the funnel it rebuilds."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate import confined
from replicate.core.records import LedgerEntry
from replicate.gen.funnel import FunnelCounter
from replicate.gen.ledger import LEDGER, Ledger, LedgerKey, decided, read_entries

KEY = LedgerKey("repo", "c0ffee", "grader/4", 0.5)


def _task_files(out: Path, task_id: str) -> None:
    (out / "specs" / task_id).mkdir(parents=True)
    (out / "specs" / task_id / "task.json").write_text("{}")


def test_outcomes_of_another_commit_grader_or_threshold_are_not_taken(tmp_path: Path) -> None:
    for key in (
        KEY,
        LedgerKey("repo", "beef", "grader/4", 0.5),
        LedgerKey("repo", "c0ffee", "grader/5", 0.5),
        LedgerKey("repo", "c0ffee", "grader/4", None),
        LedgerKey("other", "c0ffee", "grader/4", 0.5),
    ):
        ledger = Ledger(tmp_path, key)
        ledger.append(ledger.entry(f"m.{key.commit}{key.grader_version}", "traced", reason="r"))
    assert len(read_entries(tmp_path)) == 5
    assert list(decided(tmp_path, KEY)) == ["m.c0ffeegrader/4"]


def test_a_later_line_wins_and_a_minted_target_counts_only_with_its_files(
    tmp_path: Path,
) -> None:
    ledger = Ledger(tmp_path, KEY)
    ledger.append(ledger.entry("m.f", "traced", reason="flaky"))
    ledger.append(ledger.entry("m.f", "validated", task_id="t-f"))
    ledger.append(ledger.entry("m.g", "validated", task_id="t-g"))
    _task_files(tmp_path, "t-f")
    found = decided(tmp_path, KEY)
    assert list(found) == ["m.f"] and found["m.f"].task_id == "t-f"  # t-g's files are gone


def test_a_line_torn_by_a_kill_is_skipped_and_ended(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path, KEY)
    ledger.append(ledger.entry("m.f", "extracted", reason="not called by the tests"))
    whole = ledger.entry("m.g", "traced", reason="unencodable").model_dump_json()
    confined.append_bytes(tmp_path, LEDGER, whole[:40].encode())  # killed mid-write
    assert [e.symbol for e in read_entries(tmp_path)] == ["m.f"]
    resumed = Ledger(tmp_path, KEY)  # the next run ends the torn line first
    resumed.append(resumed.entry("m.h", "traced", reason="unencodable"))
    assert [e.symbol for e in read_entries(tmp_path)] == ["m.f", "m.h"]


def test_a_symlinked_ledger_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").write_text("")
    (tmp_path / LEDGER).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(confined.ConfinementError):
        read_entries(tmp_path)


def _entry(stage: str, kept: bool, reason: str = "") -> LedgerEntry:
    return Ledger(Path("."), KEY).entry("m.f", stage, task_id="t" if kept else None, reason=reason)


def test_replayed_outcomes_count_as_the_stages_that_decided_them() -> None:
    counter = FunnelCounter()
    counter.keep("extracted", 4)
    counter.replay(_entry("extracted", False, "not called by the tests"))
    counter.replay(_entry("traced", False, "unencodable"))
    counter.replay(_entry("deterministic", False, "reference body visible"))
    counter.replay(_entry("validated", True))
    assert dict(counter.counts) == {
        "extracted": 4,
        "traced": 3,
        "encodable": 2,
        "deterministic": 2,
        "validated": 1,
    }
    assert counter.drops["traced"]["not called by the tests"] == 1
    assert counter.drops["encodable"]["unencodable"] == 1
    assert counter.drops["validated"]["reference body visible"] == 1


def test_a_task_id_that_climbs_out_of_the_batch_is_never_minted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ledger is the batch's: its task ids name no folder outside `specs/`."""
    out = tmp_path / "batch"
    (out / "specs").mkdir(parents=True)
    ledger = Ledger(out, KEY)
    ledger.append(ledger.entry("m.f", "validated", task_id="../../elsewhere"))
    (tmp_path / "elsewhere").mkdir()  # out/specs/../../elsewhere: outside the batch
    (tmp_path / "elsewhere" / "task.json").write_text("{}")
    with monkeypatch.context() as patch:  # the control: a plain join finds those files
        patch.setattr("replicate.gen.ledger.name_problem", lambda name: None)
        assert list(decided(out, KEY)) == ["m.f"]
    assert decided(out, KEY) == {}
