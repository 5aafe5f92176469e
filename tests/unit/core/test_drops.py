"""The closed set of drop reasons: every member's text reads back to it, with or without a
qualifier; a text of none (a typo, an older version's reason) reads as UNKNOWN and stays as
written in the ledger."""

from __future__ import annotations

import pytest

from replicate.core import DropReason, LedgerEntry, by_reason, checked_reason, summed_reasons


def _text(member: DropReason) -> str:
    return member.says(*["x"] * member.value.count("{}"))


@pytest.mark.parametrize("member", [m for m in DropReason if m is not DropReason.UNKNOWN])
@pytest.mark.parametrize("qualifier", ["", ": ValueError: bad", " (most dropped: x)"])
def test_every_member_reads_back_with_or_without_its_qualifier(
    member: DropReason, qualifier: str
) -> None:
    assert DropReason.of(_text(member) + qualifier) is member


def test_a_member_whose_text_begins_another_is_not_taken_for_it() -> None:
    assert DropReason.of("reference hangs") is DropReason.HANGS
    assert DropReason.of("reference hangs or crashes the process") is DropReason.HANGS_OR_CRASHES
    spare = "fewer than 3 traced calls, generated inputs: mutant kill rate below 0.50"
    assert DropReason.of(spare) is DropReason.SPARSE_UNVOUCHED


def test_a_filled_member_reads_back_and_its_parts_must_all_be_given() -> None:
    text = DropReason.DEGENERATE_AT_FLOOR.says("a constant", 0.5)
    assert text == "a degenerate program (a constant) scores 0.5 or more"
    assert DropReason.of(text) is DropReason.DEGENERATE_AT_FLOOR
    with pytest.raises(ValueError, match="takes 2 parts"):
        DropReason.DEGENERATE_AT_FLOOR.says("a constant")


@pytest.mark.parametrize(
    "text",
    [
        "reference hang or crashes the process",  # a typo: its own group, were it allowed
        "reference hangsX",
        "outcome not comparable!",
        "an older version's reason",
    ],
)
def test_a_text_of_no_member_is_unknown_and_refused_when_made(text: str) -> None:
    assert DropReason.of(text) is DropReason.UNKNOWN
    with pytest.raises(ValueError, match="not a DropReason"):
        checked_reason(text)


def test_a_ledger_line_of_an_unknown_reason_is_kept_as_written() -> None:
    line = (
        '{"repo":"r","commit":"c","grader_version":"1","min_kill_rate":null,"symbol":"m.f",'
        '"stage":"traced","kept":false,"task_id":null,"reason":"an older reason","detail":""}'
    )
    entry = LedgerEntry.model_validate_json(line)
    assert entry.drop_reason is DropReason.UNKNOWN
    assert entry.reason == "an older reason"
    assert entry.model_dump_json() == line
    kept = entry.model_copy(update={"kept": True, "reason": ""})
    assert kept.drop_reason is None


def test_a_member_is_its_text_where_text_is_written() -> None:
    assert f"{DropReason.NONDETERMINISTIC}" == "nondeterministic outcome"
    assert DropReason.NONDETERMINISTIC == "nondeterministic outcome"


def test_counts_sum_per_member_the_most_first() -> None:
    drops = [
        ("argument does not pickle: local lambda", 2),
        ("not called by the tests", 3),
        ("argument does not pickle: a generator", 2),
    ]
    assert by_reason(drops) == (
        (DropReason.ARGUMENT_DOES_NOT_PICKLE, 4),
        (DropReason.NOT_CALLED, 3),
    )


def test_summed_reasons_never_show_a_bare_template() -> None:
    few = DropReason.CLASS_TOO_FEW_MEMBERS
    drops = [
        (few.says(2), 3),
        ("argument does not pickle: local lambda", 2),
        ("argument does not pickle: a generator", 2),
        (DropReason.KILL_RATE_BELOW.says("0.50"), 1),
        (DropReason.KILL_RATE_BELOW.says("0.40"), 1),
        (few.value, 1),  # a summary an older version wrote, its template as it was
    ]
    assert summed_reasons(drops) == (
        ("argument does not pickle", 4),
        ("fewer than … of its methods minted as method tasks", 4),
        ("mutant kill rate below …", 2),
    )
    assert summed_reasons(drops[:1]) == (("fewer than 2 of its methods minted as method tasks", 3),)
    assert all("{}" not in text for text, _ in summed_reasons(drops))
