"""Call sequences replayed in the jail: each sequence one input of a run whose target is the class
(`runner/replay.py` replays it), its outcome read back as a `Replay`, step by step.

`replay` runs the reference's class, or a candidate's with `override` (its file in place of the
class's); `recorded=True` gives back what the harvest recorded of each step instead (the
reference's check that a replay reproduces its tests; a candidate's run never carries them: the
runner is given inputs, never an expected outcome).  `replicate.grading.sequences` compares two
`Replay`s.
"""

from __future__ import annotations

import base64
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replicate.core import (
    CallInput,
    CallSequence,
    ClassRef,
    GradingSettings,
    Span,
    StepOutcome,
    Target,
)
from replicate.errors import InfraError
from replicate.jail.jail import Jail
from replicate.jail.wire import SEQUENCE_TAG

_NO_SPAN = Span(start_byte=0, end_byte=0, start_line=1, end_line=1)


@dataclass(frozen=True)
class Replay:
    """One sequence's replay: each step's outcome (``returned`` with the step's tagged tuple
    ``("returned", value)`` or ``("self",)`` as its value, or ``raised``) and the instance's
    tagged end state (None: never built, or not replayed); `problem`: why the run gave no steps
    (a timeout, a load error, the class not importing)."""

    steps: tuple[Mapping[str, Any], ...]
    state: Any = None
    problem: str = ""
    arguments: tuple[Any, ...] = ()  # with `encode_inputs`: each step's tagged (args, kwargs)


def class_target(cls: ClassRef) -> Target:
    """The run's target: the class itself (the runner imports it by module and qualname)."""
    return Target(
        path=cls.path,
        module=cls.module,
        qualname=cls.qualname,
        kind="function",
        signature="",
        def_span=_NO_SPAN,
        body_span=_NO_SPAN,
        body_indent="",
        body_statements=0,
    )


def sequence_input(sequence: CallSequence, index: int, *, recorded: bool = False) -> CallInput:
    """One sequence as a hidden input; with `recorded`, the recorded outcomes, not the calls
    (refused for a widened sequence: it has none)."""
    if recorded and any(s.outcome is StepOutcome.UNRECORDED for s in sequence.steps):
        raise ValueError("a widened sequence has no recorded outcomes")
    steps = tuple(
        (s.name, base64.b64decode(s.args_b64), *((s.refs,) if s.refs else ()))
        for s in sequence.steps
    )
    outcomes = tuple((s.outcome.value, base64.b64decode(s.result_b64)) for s in sequence.steps)
    data = pickle.dumps((SEQUENCE_TAG, steps, outcomes if recorded else None, None), protocol=4)
    return CallInput(
        index=index,
        origin=sequence.origin,
        call=f"{sequence.cls.qualname}: {len(sequence.steps)} steps",
        pickle_b64=base64.b64encode(data).decode("ascii"),
        visible=sequence.visible,
    )


def replay(
    jail: Jail,
    cls: ClassRef,
    sequences: Sequence[CallSequence],
    settings: GradingSettings,
    *,
    override: bytes | None = None,
    recorded: bool = False,
    encode_inputs: bool = False,
    hash_seed: int = 0,
    clock_shift_days: int = 0,
    again: bool = False,
) -> tuple[Replay, ...]:
    """Every sequence replayed on `cls` (or `override`'s class of that name) in one jail run;
    `recorded` with `override` is refused: a candidate is never handed expected outcomes.
    `encode_inputs`: each step's arguments reported too (`Replay.arguments`); `hash_seed` and
    `clock_shift_days`: the determinism gate's second run, as for a target's golden outputs;
    `again`: a candidate's second run (`Jail.run`)."""
    if recorded and override is not None:
        raise ValueError("recorded outcomes are the reference's check, never a candidate's input")
    inputs = [sequence_input(s, n, recorded=recorded) for n, s in enumerate(sequences)]
    run = jail.run(
        class_target(cls),
        inputs,
        settings,
        override=override,
        encode_inputs=encode_inputs,
        hash_seed=hash_seed,
        clock_shift_days=clock_shift_days,
        again=again,
    )
    problem = run.infra_problem()
    if problem is not None:
        raise InfraError(problem)
    if run.parsed.import_error is not None:
        return tuple(Replay((), problem=run.parsed.import_error) for _ in sequences)
    return tuple(replay_of(run.parsed.outcomes.get(n)) for n in range(len(sequences)))


def replay_of(outcome: Mapping[str, Any] | None) -> Replay:
    """A sequence's outcome as the runner reported it, taken apart step by step."""
    if outcome is None:
        return Replay((), problem="no outcome")
    value: Any = outcome.get("value")
    if outcome.get("status") != "returned" or not _tuple_of(value, 2):
        return Replay((), problem=f"{outcome.get('status')}: {outcome.get('msg', '')}"[:200])
    steps, state = value["v"]
    if not _tuple_of(steps, None):
        return Replay((), problem="malformed steps")
    return Replay(
        tuple(_step(node) for node in steps["v"]),
        None if state == {"t": "none"} else state,
        arguments=tuple(outcome.get("args_in") or ()),
    )


def _tuple_of(node: Any, length: int | None) -> bool:
    if (
        not isinstance(node, dict)
        or node.get("t") != "tuple"
        or not isinstance(node.get("v"), list)
    ):
        return False
    return length is None or len(node["v"]) == length


def _step(node: Any) -> Mapping[str, Any]:
    """One step's outcome in the form `grading.compare` compares."""
    if _tuple_of(node, 3) and node["v"][0] == {"t": "str", "v": "raised"}:
        kind, msg = node["v"][1], node["v"][2]
        exc = {"type": kind.get("v"), "msg": msg.get("v")}
        return {"status": "raised", "exc": exc, "args": [], "kwargs": {}}
    return {"status": "returned", "value": node, "args": [], "kwargs": {}}
