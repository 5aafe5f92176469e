"""The harvest's reader of a generator argument (`wrapping._consuming`): what the target reads
passes through unchanged, sent and thrown values included, and is kept."""

from __future__ import annotations

from collections.abc import Generator

import pytest

from replicate.harvest.wrapping import MAX_CONSUMED, _consuming


def _echo() -> Generator[int, int | None, str]:
    total = 0
    while total < 100:
        try:
            got = yield total
        except KeyError:
            total += 1000
            continue
        total += got if got is not None else 1
    return "done"


def test_items_sent_and_thrown_pass_through_and_what_was_yielded_is_kept() -> None:
    kept: list[int] = []
    reader = _consuming(_echo(), kept)
    assert next(reader) == 0
    assert reader.send(5) == 5
    assert next(reader) == 6
    with pytest.raises(StopIteration) as stop:
        reader.throw(KeyError("x"))
    assert stop.value.value == "done"
    assert kept == [0, 5, 6]


def test_closing_it_closes_the_generator_and_what_is_left_stays_unread() -> None:
    source = iter_squares = (n * n for n in range(10))
    kept: list[int] = []
    reader = _consuming(source, kept)
    assert [next(reader), next(reader)] == [0, 1]
    assert next(iter_squares) == 4  # the caller's own reads are not kept
    reader.close()
    assert kept == [0, 1] and list(iter_squares) == []


def test_it_keeps_at_most_its_bound() -> None:
    kept: list[int] = []
    assert sum(_consuming((n for n in range(MAX_CONSUMED + 10)), kept)) > 0
    assert len(kept) == MAX_CONSUMED
