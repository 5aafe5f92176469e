"""The recorder's channel read on the trusted side: only `record` frames under the run's nonce,
naming a target of the job, with readable arguments, become calls; a malformed outcome is a
runner error (which no replay equals, so the determinism check drops it)."""

from __future__ import annotations

import json

from replicate.jail.node import NodeCall, Status
from replicate.jail.node_harvest import read_records

NONCE = "n0"
STR = {"t": "str", "v": "1h"}
RETURNED = {"status": "returned", "value": {"t": "num", "v": "3600000"}, "args": [STR]}


def line(frame: object, nonce: str = NONCE) -> bytes:
    return f"{nonce} {json.dumps(frame)}".encode()


def test_only_well_formed_records_of_the_run_are_read() -> None:
    good = {"event": "record", "target": 1, "args": [STR], "outcome": RETURNED}
    channel = b"\n".join(
        [
            line(good),
            line(good, nonce="other"),  # another run's nonce
            line({**good, "event": "result"}),
            line({**good, "target": 2}),  # no such target
            line({**good, "target": True}),
            line({**good, "args": [{"t": "no such tag"}]}),
            line({**good, "args": "1h"}),
            b"not a frame",
            line({**good, "outcome": {"status": "returned"}}),  # no value
        ]
    )
    read = read_records(channel, NONCE, 2)
    assert [(key, call) for key, call, _, _ in read] == [(1, NodeCall(("1h",)))] * 2
    assert [visible for *_, visible in read] == [False, False]  # the frames do not say
    assert read[0][2].status is Status.RETURNED and read[0][2].args == ("1h",)
    assert read[1][2].status is Status.RUNNER_ERROR
