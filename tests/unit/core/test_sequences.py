"""Call sequences: the records, their comparison step by step, and reading them back."""

from __future__ import annotations

import base64
import pickle
from typing import Any, cast

import pytest
from pydantic import ValidationError

from replicate.core import GradingSettings
from replicate.core import sequences as seq
from replicate.grading.sequences import compare_sequences, failing_prefix
from replicate.harvest.call_sequences import read_sequences
from replicate.jail import Jail
from replicate.jail.runner.encoding import encode
from replicate.jail.sequences import Replay, replay, replay_of, sequence_input
from replicate.jail.wire import SEQUENCE_TAG

CLS = seq.ClassRef(path="pkg/box.py", module="pkg.box", qualname="Box")
SETTINGS = GradingSettings()


def _b64(value: Any) -> str:
    return base64.b64encode(pickle.dumps(value, protocol=4)).decode("ascii")


def _step(name: str, *args: Any, result: Any = None) -> seq.Step:
    return seq.Step(
        name=name,
        args_b64=_b64((args, {})),
        outcome=seq.StepOutcome.RETURNED,
        result_b64=_b64(result),
    )


def _sequence(*names: str) -> seq.CallSequence:
    return seq.CallSequence(cls=CLS, steps=tuple(_step(n) for n in ("__init__", *names)))


def test_step_kinds() -> None:
    kinds = [s.kind for s in _sequence("add", "__len__").steps]
    assert kinds == [seq.StepKind.CONSTRUCT, seq.StepKind.METHOD, seq.StepKind.OPERATOR]


def test_a_sequence_starts_with_its_one_class_call() -> None:
    with pytest.raises(ValidationError):
        seq.CallSequence(cls=CLS, steps=(_step("add"),))
    with pytest.raises(ValidationError):
        seq.CallSequence(cls=CLS, steps=(_step("__init__"), _step("__init__")))
    with pytest.raises(ValidationError):
        seq.CallSequence(cls=CLS, steps=())
    assert _sequence("add", "pop").prefix(2).steps == _sequence("add").steps
    assert len(_sequence("add").prefix(0).steps) == 1  # never without its class call


def _returned(value: Any) -> dict[str, Any]:
    return {"status": "returned", "value": encode(("returned", value)), "args": [], "kwargs": {}}


def _raised(kind: str) -> dict[str, Any]:
    return {"status": "raised", "exc": {"type": kind, "msg": ""}, "args": [], "kwargs": {}}


def _replay(*values: Any, state: Any = None) -> Replay:
    steps = tuple(_raised(v[1]) if isinstance(v, tuple) else _returned(v) for v in values)
    return Replay(steps, None if state is None else encode(state))


def test_equal_replays_match_every_step_and_the_state() -> None:
    found = compare_sequences(
        _replay(None, 1, 2, state=[1, 2]), _replay(None, 1, 2, state=[1, 2]), SETTINGS
    )
    assert found.passed and found.matched == 3 and found.state_compared
    assert found.reward == 1.0 and found.failing_prefix is None


def test_the_comparison_stops_at_the_first_failing_step() -> None:
    found = compare_sequences(_replay(None, 1, 2, 3), _replay(None, 1, 5, 3), SETTINGS)
    assert (found.matched, found.first_failing, found.failing_prefix) == (2, 2, 3)
    assert found.reward == 2 / 4 and not found.passed
    assert "step 2" in found.detail and "5" in found.detail


def test_a_raise_differs_from_a_return_and_by_its_type() -> None:
    assert (
        compare_sequences(
            _replay(None, 1), _replay(None, ("x", "KeyError")), SETTINGS
        ).first_failing
        == 1
    )
    same = compare_sequences(
        _replay(None, ("x", "KeyError")), _replay(None, ("x", "KeyError")), SETTINGS
    )
    assert same.passed
    other = compare_sequences(
        _replay(None, ("x", "KeyError")), _replay(None, ("x", "IndexError")), SETTINGS
    )
    assert other.first_failing == 1


def test_a_shorter_or_failed_replay_fails_where_it_stops() -> None:
    found = compare_sequences(_replay(None, 1, 2), Replay((), problem="timeout: "), SETTINGS)
    assert found.first_failing == 0 and found.matched == 0 and "timeout" in found.detail
    assert compare_sequences(_replay(None, 1, 2), _replay(None, 1), SETTINGS).first_failing == 2


def test_the_end_state_counts_as_one_more_step() -> None:
    found = compare_sequences(
        _replay(None, 1, state={"a": 1}), _replay(None, 1, state={"a": 2}), SETTINGS
    )
    assert found.first_failing is None and not found.state_matches and not found.passed
    assert found.reward == 2 / 3 and found.failing_prefix == 2
    unasked = compare_sequences(
        _replay(None, 1, state={"a": 1}), _replay(None, 1, state={"a": 2}), SETTINGS, state=False
    )
    assert unasked.passed and not unasked.state_compared


def test_an_opaque_end_state_is_not_compared() -> None:
    expected = Replay(_replay(None).steps, {"t": "opaque", "type": "x"})
    found = compare_sequences(expected, Replay(_replay(None).steps, encode(1)), SETTINGS)
    assert found.passed and not found.state_compared


def test_the_counterexample_is_the_shortest_failing_prefix() -> None:
    sequence = _sequence("a", "b", "c")
    comparison = seq.SequenceComparison(steps=4, matched=2, first_failing=2)
    prefix = failing_prefix(sequence, comparison)
    assert prefix is not None and [s.name for s in prefix.steps] == ["__init__", "a", "b"]
    assert failing_prefix(sequence, seq.SequenceComparison(steps=4, matched=4)) is None


def test_a_replay_is_read_step_by_step_from_the_runner_outcome() -> None:
    value = {
        "t": "tuple",
        "v": [encode((("returned", None), ("self",), ("raised", "KeyError", "k"))), encode([3])],
    }
    replay = replay_of({"status": "returned", "value": value})
    assert [s["status"] for s in replay.steps] == ["returned", "returned", "raised"]
    assert replay.steps[2]["exc"] == {"type": "KeyError", "msg": "k"}
    assert replay.state == encode([3]) and not replay.problem
    assert replay_of({"status": "timeout"}).problem.startswith("timeout")
    assert replay_of(None).problem and replay_of({"status": "returned", "value": encode(1)}).problem


def test_an_input_carries_the_recorded_outcomes_only_when_asked() -> None:
    sequence = _sequence("add")
    plain = pickle.loads(base64.b64decode(sequence_input(sequence, 0).pickle_b64))
    assert plain[0] == SEQUENCE_TAG and plain[2] is None
    assert [name for name, _ in plain[1]] == ["__init__", "add"]
    checked = pickle.loads(base64.b64decode(sequence_input(sequence, 0, recorded=True).pickle_b64))
    assert [outcome for outcome, _ in checked[2]] == ["returned", "returned"]


def test_a_candidate_is_never_handed_the_recorded_outcomes() -> None:
    with pytest.raises(ValueError, match="never a candidate"):
        replay(cast(Jail, None), CLS, [_sequence("add")], SETTINGS, override=b"", recorded=True)


def _record(*names: str, key: str = CLS.key, **extra: Any) -> dict[str, Any]:
    steps = [s.model_dump(mode="json") for s in _sequence(*names).steps]
    return {
        "rec": "sequence",
        "key": key,
        "origin": "t",
        "ending": "test ended",
        "steps": steps,
        **extra,
    }


def test_records_are_read_back_deduplicated_and_checked() -> None:
    records = [
        _record("add"),
        _record("add"),  # the same steps again
        _record("add", "pop", ending="step limit", visible=False),
        _record("add", key="pkg.box.Other"),  # not a chosen class
        {"rec": "sequence", "key": CLS.key, "steps": [{"name": "add"}]},  # malformed
        {**_record("add"), "steps": _record("pop")["steps"][1:]},  # no class call first
    ]
    found = read_sequences(records, {CLS.key: CLS})
    assert [len(s.steps) for s in found[CLS.key]] == [2, 3]
    assert found[CLS.key][1].ending is seq.Ending.STEP_LIMIT and not found[CLS.key][1].visible
