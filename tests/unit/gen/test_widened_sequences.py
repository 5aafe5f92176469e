"""The widened sequences gen keeps: the determinism gate (two replays of the reference must agree,
and give steps) and the cap on those whose class call raised."""

from __future__ import annotations

import base64
import pickle
from typing import Any

from replicate.core import CallSequence, ClassRef, Ending, GradingSettings, Step, StepOutcome
from replicate.gen.sequences import RAISED_FIRST_SHARE, keep
from replicate.jail import Replay
from replicate.jail.runner.encoding import encode

CLS = ClassRef(path="pkg/box.py", module="pkg.box", qualname="Box")
SETTINGS = GradingSettings()


def _sequence(n: int) -> CallSequence:
    blob = base64.b64encode(pickle.dumps(((n,), {}), protocol=4)).decode("ascii")
    steps = tuple(
        Step(name=name, args_b64=blob, outcome=StepOutcome.UNRECORDED)
        for name in ("__init__", "add")
    )
    return CallSequence(cls=CLS, origin="widened", ending=Ending.WIDENED, steps=steps)


def _returned(value: Any) -> dict[str, Any]:
    return {"status": "returned", "value": encode(("returned", value)), "args": [], "kwargs": {}}


def _raised() -> dict[str, Any]:
    exc = {"type": "ValueError", "msg": "no"}
    return {"status": "raised", "exc": exc, "args": [], "kwargs": {}}


def _built(value: Any) -> Replay:
    return Replay((_returned(None), _returned(value)), state=encode({"n": value}))


REFUSED = Replay((_raised(),))


def test_two_replays_that_differ_drop_the_sequence() -> None:
    made = [_sequence(n) for n in range(4)]
    first = [_built(0), _built(1), _built(2), Replay((), problem="timeout")]
    second = [_built(0), _built(5), Replay((_returned(None), _returned(2))), Replay(())]
    kept = keep(made, first, second, SETTINGS)
    # the second differs at its last step; the third in its end state; the fourth gave nothing
    assert kept.sequences == (made[0],) and kept.expected == (first[0],)
    assert (kept.drawn, kept.unstable, kept.raised_first) == (4, 3, 0)


def test_sequences_refused_at_their_class_call_are_capped_to_their_share() -> None:
    made = [_sequence(n) for n in range(30)]
    replays = [REFUSED if n % 2 else _built(n) for n in range(30)]  # half refused
    kept = keep(made, replays, replays, SETTINGS)
    refused = [r for r in kept.expected if r is REFUSED]
    assert len(kept.sequences) - len(refused) == 15  # every one that built an instance
    assert 0 < len(refused) <= RAISED_FIRST_SHARE * len(kept.sequences)
    assert kept.raised_first == 15 - len(refused)
    assert refused == [REFUSED] * len(refused)
    # the first refused ones drawn are those kept
    assert kept.sequences[1] is made[1]
    none_built = keep(made[1::2], replays[1::2], replays[1::2], SETTINGS)
    assert none_built.sequences == () and none_built.raised_first == 15
