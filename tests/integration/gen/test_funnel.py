"""The funnel tally: counts per stage, main drop reasons, frozen record."""

from __future__ import annotations

from replicate.core.records import SkippedFile
from replicate.gen.funnel import STAGES, FunnelCounter
from tests.integration.minted import DROPPED, TARGETS, TOO_FEW_MEMBERS, Tiny


def test_freeze_orders_stages_and_keeps_top_reasons() -> None:
    counter = FunnelCounter()
    counter.keep("extracted", 10)
    counter.keep("traced", 7)
    counter.keep("traced")
    for n, reason in enumerate("abcdefg"):
        counter.drop("traced", reason, n + 1)
    counter.drop("validated", "stub passes")
    skipped = (SkippedFile(path="x.py", reason="syntax error"),)
    funnel = counter.freeze("repo", "c0ffee", skipped, 1.23456, ("note",))

    assert [s.stage for s in funnel.stages] == list(STAGES)
    counts = {s.stage: s.count for s in funnel.stages}
    assert counts == {
        "extracted": 10,
        "traced": 8,
        "encodable": 0,
        "deterministic": 0,
        "validated": 0,
    }
    traced = funnel.stages[1]
    assert traced.drops == (("g", 7), ("f", 6), ("e", 5), ("d", 4), ("c", 3))
    assert funnel.stages[4].drops == (("stub passes", 1),)
    assert funnel.stages[0].drops == ()
    assert funnel.duration_s == 1.23
    assert funnel.skipped_files == skipped
    assert funnel.setup_notes == ("note",)
    assert (funnel.repo, funnel.commit) == ("repo", "c0ffee")


def test_counters_are_not_shared_between_instances() -> None:
    first, second = FunnelCounter(), FunnelCounter()
    first.drop("traced", "x")
    first.keep("traced")
    assert not second.drops["traced"] and not second.counts


def test_tiny_mint_funnel(tiny: Tiny) -> None:
    funnel = tiny.funnel
    counts = {s.stage: s.count for s in funnel.stages}
    assert counts == {**dict.fromkeys(STAGES, 4), "extracted": TARGETS}  # DROPPED never called
    assert funnel.repo == "tinypkg"  # its project name, not its folder's (tinyrepo)
    assert len(funnel.commit) == 40
    assert set(funnel.stages[1].drops) == {("not called by the tests", 1), (TOO_FEW_MEMBERS, 1)}
    assert all(not s.drops for s in funnel.stages if s.stage != "traced")
    assert DROPPED not in {tiny.batch.load(t).hidden.target.symbol for t in tiny.task_ids}
