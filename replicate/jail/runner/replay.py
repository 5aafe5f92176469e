"""A call sequence replayed on the job's target, a class: the class called with the first step's
arguments, then each step's method looked up on the class and called on the instance, in order;
every step's outcome encoded as soon as it ends (a value a later step changes is shown as it was),
and the instance itself at the end (its fields, by value).  A step's pickle is its ``(args,
kwargs)`` or a recipe of them (`calling._unpack`: a recorded step's call with plain arguments
replaced, what a widened sequence is made of); a step ``(name, pickle, refs)`` has some of its
arguments replaced by an earlier step's very result (``refs``: ``(position or keyword, step
index)``, index 0 the instance), as the tests fed them back.

The outcome of the whole input is one ``returned`` value: a tuple ``(steps, state)``, `steps` a
tuple with one tuple per step, ``("returned", value)``, ``("raised", type, msg)`` or
``("self",)`` (the step returned the instance), and `state` the instance (None when its class
call raised).  A sequence with `recorded` outcomes is not replayed: those are given back in the
same form (the reference's check against what its tests saw; never a candidate's job).  With
the inputs reported (gen's ``encode_inputs``), ``args_in`` holds each step's ``(args, kwargs)``
as it was before the step, from a second copy of its pickle."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .base import _RANDOM_STATE, _RETURNED, _SET_RANDOM_STATE, _pickle_loads, _Timeout, _type
from .calling import Sequence, _unpack
from .encoding import encode, exception_record

if TYPE_CHECKING:
    from .base import EncodeLimits

globals()["__builtins__"] = dict(builtins.__dict__)  # see base

_RETURNED_STEP, _RAISED_STEP, _SELF_STEP = "returned", "raised", "self"


def replay_work(
    cls: Any, args: tuple[Any, ...], lim: EncodeLimits, shown: bool = False
) -> Callable[[], dict[str, Any]] | None:
    """The work of replaying the sequence `args` holds on `cls`, or None: not a sequence;
    `shown`: each step's arguments reported too."""
    if len(args) != 1 or _type(args[0]) is not Sequence:
        return None
    sequence: Sequence = args[0]

    def work() -> dict[str, Any]:
        if _RANDOM_STATE:
            _SET_RANDOM_STATE(_RANDOM_STATE[0])
        if sequence.recorded is not None:
            steps, state = [_recorded(step, lim) for step in sequence.recorded], None
        else:
            steps, state = _replayed(cls, sequence.steps, lim)
        value = {"t": "tuple", "v": [{"t": "tuple", "v": steps}, encode(state, lim)]}
        out: dict[str, Any] = {"status": _RETURNED, "value": value}
        if shown:
            arg_lim = lim.arguments()
            out["args_in"] = [_shown(step[1], arg_lim) for step in sequence.steps]
        return out

    return work


def _replayed(cls: Any, steps: tuple[Any, ...], lim: EncodeLimits) -> tuple[list[Any], Any]:
    """Each step's encoded outcome, and the instance at the end (None: never built)."""
    out: list[Any] = []
    instance: Any = None
    results: list[Any] = []  # what each step returned: the instance for the class call
    for n, step in enumerate(steps):
        name, blob = step[0], step[1]
        try:
            call_args, call_kwargs = _unpack(blob)
            if len(step) > 2:
                call_args, call_kwargs = _fed(step[2], call_args, call_kwargs, results)
            if n == 0:
                instance = cls(*call_args, **call_kwargs)
                value = instance  # `__init__` returned None: encoded as such below
            else:
                value = getattr(cls, name)(instance, *call_args, **call_kwargs)
        except BaseException as exc:
            if _type(exc) is _Timeout:
                raise
            out.append(_raised(exc, lim))
            if n == 0:
                return out, None
            results.append(None)
            continue
        results.append(value)
        if n == 0:
            out.append(_returned(None, lim))
        else:
            out.append(encode((_SELF_STEP,), lim) if value is instance else _returned(value, lim))
    return out, instance


def _fed(refs: Any, args: Any, kwargs: Any, results: list[Any]) -> tuple[Any, Any]:
    """The step's arguments with each of `refs`, ``(position or keyword, step index)``, replaced
    by that earlier step's very result (index 0: the instance)."""
    args, kwargs = list(args), dict(kwargs)
    for slot, index in refs:
        if _type(index) is not int or not 0 <= index < len(results):
            raise TypeError("a step is fed the result of a step not before it")
        if _type(slot) is int and 0 <= slot < len(args):
            args[slot] = results[index]
        elif _type(slot) is str:
            kwargs[slot] = results[index]
        else:
            raise TypeError("a step is fed a result in an argument it does not have")
    return tuple(args), kwargs


def _shown(blob: bytes, lim: EncodeLimits) -> Any:
    """A step's ``(args, kwargs)`` encoded from a fresh copy; None when it does not load."""
    try:
        return encode(_unpack(blob), lim)
    except Exception:  # noqa: BLE001 - the step itself reported how its pickle failed
        return encode(None, lim)


def _recorded(step: Any, lim: EncodeLimits) -> Any:
    outcome, blob = step
    if outcome == _SELF_STEP:
        return encode((_SELF_STEP,), lim)
    value = _pickle_loads(blob)
    return _raised(value, lim) if outcome == _RAISED_STEP else _returned(value, lim)


def _returned(value: Any, lim: EncodeLimits) -> Any:
    return encode((_RETURNED_STEP, value), lim)


def _raised(exc: BaseException, lim: EncodeLimits) -> Any:
    record = exception_record(exc)
    return encode((_RAISED_STEP, record["type"], record["msg"]), lim)
