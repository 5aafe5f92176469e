"""Result frames read by their known outcome text (`replicate.jail.known_outcomes`): the same
frame decoding gives, for every line, whether the text was seen before or not."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from replicate.jail import frames
from replicate.jail.known_outcomes import KnownOutcomes

PREFIX = b"n0nce "


def _line(index: int, outcome: dict[str, Any], t: float | int) -> bytes:
    frame = {"event": "result", "i": index, "outcome": {**outcome, "t": t}}
    return PREFIX + json.dumps(frame, separators=(",", ":")).encode()


def _decoded(line: bytes) -> Any:
    try:
        frame = json.loads(line[len(PREFIX) :])
    except ValueError:
        return None
    return frame if type(frame) is dict else None


def _read(known: KnownOutcomes, line: bytes) -> Any:
    found = known.frame(line, len(PREFIX))
    if found is not None:
        return found
    frame = _decoded(line)
    if frame is not None and frame.get("event") == "result":
        known.learn(line, len(PREFIX), frame)
    return frame


OUTCOME = {"status": "returned", "value": {"t": "list", "v": [{"t": "int", "v": "1"}]}}


def test_a_known_text_is_not_decoded_again_and_reads_its_own_index_and_duration() -> None:
    known = KnownOutcomes()
    first = _read(known, _line(3, OUTCOME, 0.25))
    assert known.frame(_line(3, OUTCOME, 0.25), len(PREFIX)) is not None  # now known
    again = known.frame(_line(7, OUTCOME, 12), len(PREFIX))
    assert again == _decoded(_line(7, OUTCOME, 12))
    assert type(again["outcome"]["t"]) is int  # as json reads a number without a fraction
    assert again["outcome"]["value"] is first["outcome"]["value"]  # shared, not decoded
    assert list(again["outcome"]) == list(first["outcome"])  # key order kept, "t" last


def test_lines_of_another_shape_are_decoded_as_before() -> None:
    known = KnownOutcomes()
    _read(known, _line(1, OUTCOME, 0.5))
    base = _line(1, OUTCOME, 0.5)
    for other in (
        base + b" ",  # trailing space: decoding strips it, the shape check does not
        base[:-2] + b',"x":1}}',  # a key after "t"
        base.replace(b'"t":0.5', b'"t":NaN'),  # not a JSON number
        base.replace(b'"i":1', b'"i":01'),  # not a JSON number
        base.replace(b'"event":"result"', b'"event":"done"'),
    ):
        assert known.frame(other, len(PREFIX)) is None


def test_an_earlier_duplicate_t_is_not_learnt_as_last() -> None:
    known = KnownOutcomes()
    line = PREFIX + b'{"event":"result","i":0,"outcome":{"status":"returned","t":1,"v":2,"t":3}}'
    frame = _decoded(line)
    assert list(frame["outcome"]) == ["status", "t", "v"]  # json keeps the first position
    known.learn(line, len(PREFIX), frame)
    assert known.frame(line, len(PREFIX)) is None  # {**untimed, "t": ...} would reorder it


def test_the_oldest_texts_leave_first_within_the_budget() -> None:
    known = KnownOutcomes(budget_bytes=200)
    lines = [_line(0, {"status": "returned", "value": {"t": "str", "v": str(n) * 40}}, 0.1)
             for n in range(5)]  # fmt: skip
    for line in lines:
        _read(known, line)
    assert known.size <= 200
    assert known.frame(lines[-1], len(PREFIX)) is not None
    assert known.frame(lines[0], len(PREFIX)) is None


def test_the_audit_finds_an_outcome_changed_after_it_was_handed_out() -> None:
    known = KnownOutcomes()
    frame = _read(known, _line(0, OUTCOME, 0.5))
    assert known.audit() == []
    frame["outcome"]["value"]["v"].append({"t": "none"})  # a reader that changes what it read
    assert len(known.audit()) == 1


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)
TIMES = st.integers(0, 5) | st.floats(0, 10, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), JSON, TIMES, st.integers(0, 3)), max_size=8))
def test_reading_gives_what_decoding_gives(lines: list[tuple[int, Any, float, int]]) -> None:
    known = KnownOutcomes()
    for index, value, t, spoil in lines:
        line = _line(index, {"status": "returned", "value": value}, t)
        line = (line, line + b"\n", line[:-1], line.replace(b"{", b"{ ", 1))[spoil]
        assert _read(known, line) == _decoded(line)
        for _ in range(2):  # read by the channel's own reader, learnt the first time
            assert frames.read_frame(line, PREFIX) == _decoded(line)


def test_a_gen_keeps_more_while_it_mints_and_the_usual_budget_after() -> None:
    known = KnownOutcomes(budget_bytes=200)
    lines = [_line(0, {"status": "returned", "value": {"t": "str", "v": str(n) * 40}}, 0.1)
             for n in range(8)]  # fmt: skip
    with known.while_minting():
        with known.while_minting():  # two gens of one process (threads)
            for line in lines:
                _read(known, line)
        assert known.size > 200  # all kept: the first gen still mints
        assert known.frame(lines[0], len(PREFIX)) is not None
    assert known.size <= 200 and known.budget == 200
    assert known.frame(lines[-1], len(PREFIX)) is not None
    assert known.frame(lines[0], len(PREFIX)) is None


def test_clearing_forgets_every_text_and_its_size() -> None:
    known = KnownOutcomes(budget_bytes=200)
    _read(known, _line(0, OUTCOME, 0.5))
    known.clear()
    assert known.size == 0 and known.frame(_line(0, OUTCOME, 0.5), len(PREFIX)) is None
    _read(known, _line(0, OUTCOME, 0.5))  # learnt again, not trimmed away at once
    assert known.frame(_line(0, OUTCOME, 0.5), len(PREFIX)) is not None
