"""`replicate explain`'s reading of a ledger: which run counts, picking a target by name, the
reasons counted per stage."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.core.records import LedgerEntry
from replicate.gen.ledger import LEDGER, Ledger, LedgerKey
from replicate.gen.reasons import NoLedger, NoMatch, explain, find, outcomes, tally

KEY = LedgerKey("repo", "c0ffee", "grader/4", 0.5)
TOO_FEW = "fewer than 3 deterministic inputs"


def _write(out: Path, entries: list[LedgerEntry]) -> None:
    ledger = Ledger(out, KEY)
    for entry in entries:
        ledger.append(entry)


def _batch(out: Path) -> list[LedgerEntry]:
    ledger = Ledger(out, KEY)
    entries = [
        ledger.entry("pkg.text.shout", "validated", task_id="repo__pkg.text.shout__1"),
        ledger.entry("pkg.text.whisper", "extracted", reason="not called by the tests"),
        ledger.entry("pkg.text.Parser.feed", "traced", reason="outcome not comparable"),
        ledger.entry("pkg.num.parse", "encodable", reason=TOO_FEW, detail="2 of 5 nondet"),
        ledger.entry("pkg.num.parse_int", "encodable", reason=TOO_FEW),
        ledger.entry("pkg.num.clamp", "deterministic", reason="mutant kill rate below 0.50"),
    ]
    _write(out, entries)
    return entries


def test_a_name_picks_exact_then_dotted_end_then_part(tmp_path: Path) -> None:
    _batch(tmp_path)
    entries = outcomes(tmp_path)
    assert find(entries, "pkg.num.parse").symbol == "pkg.num.parse"  # exact, though a prefix
    assert find(entries, "feed").symbol == "pkg.text.Parser.feed"
    assert find(entries, "Parser.feed").symbol == "pkg.text.Parser.feed"
    assert find(entries, "whisp").symbol == "pkg.text.whisper"  # a part only it holds
    assert find(entries, "CLAMP").symbol == "pkg.num.clamp"  # parts ignore case
    assert find(entries, "parse").symbol == "pkg.num.parse"  # a dotted end before a part


def test_several_matches_are_listed_and_none_names_close_ones(tmp_path: Path) -> None:
    _batch(tmp_path)
    entries = outcomes(tmp_path)
    with pytest.raises(NoMatch, match=r"matches 2 targets: pkg\.num\.parse, pkg\.num\.parse_int"):
        find(entries, "num.pars")
    with pytest.raises(NoMatch, match="matches 3 targets") as several:
        find(entries, "pkg.text")
    assert str(several.value).count("pkg.text.") == 3
    with pytest.raises(NoMatch, match=r"no target .* 'shuot' \(6 targets\); close: pkg.text.shout"):
        find(entries, "shuot")
    with pytest.raises(NoMatch) as nothing:
        find(entries, "zzzzqqq")
    assert "close" not in str(nothing.value)


def test_the_latest_run_of_each_repository_counts(tmp_path: Path) -> None:
    old = Ledger(tmp_path, LedgerKey("repo", "0ld", "grader/4", 0.5))
    old.append(old.entry("pkg.gone", "extracted", reason="not called by the tests"))
    old.append(old.entry("pkg.kept", "extracted", reason="not called by the tests"))
    other = Ledger(tmp_path, LedgerKey("other", "beef", "grader/4", 0.5))
    other.append(other.entry("pkg.kept", "validated", task_id="other__pkg.kept__1"))
    new = Ledger(tmp_path, KEY)
    new.append(new.entry("pkg.kept", "traced", reason="flaky"))
    new.append(new.entry("pkg.kept", "validated", task_id="repo__pkg.kept__2"))
    found = outcomes(tmp_path)
    assert [(e.repo, e.symbol, e.task_id) for e in found] == [
        ("other", "pkg.kept", "other__pkg.kept__1"),
        ("repo", "pkg.kept", "repo__pkg.kept__2"),
    ]
    with pytest.raises(NoMatch, match=r"other:pkg\.kept, repo:pkg\.kept"):
        find(found, "kept")


def test_a_batch_without_a_ledger_or_with_an_empty_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NoLedger, match=f"has no {LEDGER}"):
        outcomes(tmp_path)
    (tmp_path / LEDGER).write_text("not json\n")
    with pytest.raises(NoLedger, match="records no target"):
        outcomes(tmp_path)


def test_where_a_target_stopped(tmp_path: Path) -> None:
    entries = _batch(tmp_path)
    kept = explain(tmp_path, entries[0])
    assert kept.dropped_at is None and kept.spec_dir is None  # its folders are not there
    (tmp_path / "specs" / "repo__pkg.text.shout__1").mkdir(parents=True)
    (tmp_path / "reference_impls" / "repo__pkg.text.shout__1").mkdir(parents=True)
    kept = explain(tmp_path, entries[0])
    assert kept.spec_dir == tmp_path / "specs" / "repo__pkg.text.shout__1"
    assert kept.hidden_dir == tmp_path / "reference_impls" / "repo__pkg.text.shout__1"
    stops = [explain(tmp_path, e).dropped_at for e in entries[1:]]
    assert stops == ["traced", "encodable", "deterministic", "deterministic", "validated"]


def test_every_reason_is_counted_at_the_stage_that_dropped(tmp_path: Path) -> None:
    stages = {s.stage: s for s in tally(_batch(tmp_path))}
    assert [(s.stage, s.kept) for s in stages.values()] == [
        ("extracted", 6),
        ("traced", 5),
        ("encodable", 4),
        ("deterministic", 2),
        ("validated", 1),
    ]
    assert stages["traced"].drops == (("not called by the tests", 1),)
    assert stages["deterministic"].drops == ((TOO_FEW, 2),)
    assert stages["validated"].drops == (("mutant kill rate below 0.50", 1),)
    assert stages["extracted"].drops == ()


def test_a_task_id_that_climbs_out_names_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ledger is the batch's: a minted entry's task id never shows a folder outside it."""
    out = tmp_path / "batch"
    (out / "specs").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()  # out/specs/../../elsewhere
    entry = Ledger(out, KEY).entry("pkg.f", "validated", task_id="../../elsewhere")
    with monkeypatch.context() as patch:  # the control: a plain join names the outside folder
        patch.setattr("replicate.gen.reasons.name_problem", lambda name: None)
        assert explain(out, entry).spec_dir == out / "specs" / "../../elsewhere"
    found = explain(out, entry)
    assert found.spec_dir is None and found.hidden_dir is None and found.dropped_at is None
