"""One call of the target on one input, inside its time window: unpickling the input (or
building it from a recipe), the alarm armed around the call, the outcome encoded."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .base import (
    _ALRM,
    _HEAPTYPE,
    _ITIMER_REAL,
    _LOAD_ERROR,
    _MSG_CAP,
    _RAISED,
    _RANDOM_STATE,
    _RECIPE,
    _RECIPE_CTOR,
    _RETURNED,
    _SAME,
    _SEQUENCE,
    _SET_RANDOM_STATE,
    _SIG_BLOCK,
    _SIG_UNBLOCK,
    _SIGALRM,
    _TIMEOUT,
    _a2b_base64,
    _Alarm,
    _CoroutineType,
    _dict_items,
    _id,
    _is_in,
    _on_alarm,
    _perf,
    _pickle_loads,
    _proxy_get,
    _setitimer,
    _sigmask,
    _signal,
    _Timeout,
    _type,
    _type_dict,
    _type_flags,
)
from .by_type import _SCALARS
from .byvalue import _name_by_value
from .encoding import encode, exception_record
from .probes import Probes, _drive

if TYPE_CHECKING:
    from .base import EncodeLimits

globals()["__builtins__"] = dict(builtins.__dict__)  # see base


def _timed(work: Callable[[], dict[str, Any]], timeout: float) -> dict[str, Any]:
    """Run `work` with SIGALRM armed; its result with elapsed `t`, or a timeout outcome."""
    with _AlarmRegion():
        return _armed(work, timeout)


class _AlarmRegion:
    """SIGALRM unblocked (our handler installed) inside, blocked and disarmed outside: no
    timeout is ever raised in the runner's own code between inputs.  The timer is left running
    on the way out (one syscall fewer per call): an alarm it raises later stays pending while
    blocked and meets our handler, disarmed, when the next region opens; each `_armed` sets
    the timer afresh."""

    def __enter__(self) -> None:
        _signal(_SIGALRM, _on_alarm)  # first: an alarm pending from candidate code hits ours,
        _Alarm.armed = False  # disarmed, and is dropped
        _sigmask(_SIG_UNBLOCK, _ALRM)

    def __exit__(self, *exc: object) -> None:
        _sigmask(_SIG_BLOCK, _ALRM)
        _Alarm.armed = False


def _armed(work: Callable[[], dict[str, Any]], timeout: float) -> dict[str, Any]:
    """`_timed` inside an alarm region (several of these share one region's two mask calls)."""
    start = _perf()
    result: dict[str, Any] | None = None
    try:
        _signal(_SIGALRM, _on_alarm)  # again each time: the candidate may have replaced it
        _Alarm.fired = False
        _Alarm.armed = True
        _setitimer(_ITIMER_REAL, timeout, 0.05)  # re-fires if the candidate swallows it
        result = work()
        _Alarm.armed = False  # a late alarm from here on is ignored by the handler
    except _Timeout:
        _Alarm.armed = False
    elapsed = round(_perf() - start, 6)
    if result is None or _Alarm.fired or elapsed > timeout:  # SIGALRM may have been ignored
        return {"status": _TIMEOUT, "t": elapsed}
    result["t"] = elapsed
    return result


_READ_ITEMS = 64  # items of a list or tuple argument looked at for iterators to count


def _counted(it: Any) -> int | None:
    """What is left of an iterator, by its type's own `__length_hint__`, for iterators of a
    static (C) type only (a list's, a tuple's, a str's, a range's, a dict's, `repeat(x, n)`):
    their methods cannot be changed by the candidate, and the hint is the items left.  None
    for any other object (a generator, `map`, `count`: reading how far they are would consume
    them)."""
    kind = _type(it)
    if _type_flags(kind) & _HEAPTYPE:
        return None
    own = _type_dict(kind)
    hint = _proxy_get(own, "__length_hint__", None)
    if hint is None or _proxy_get(own, "__next__", None) is None:
        return None
    try:
        left = hint(it)
    except (TypeError, ValueError, OverflowError):  # an endless `repeat(x)` has no length
        return None
    return left if _type(left) is int else None


class ArgReads:
    """How many items each iterator among a call's arguments (and among the items of a list or
    tuple argument) had yielded at each `mark`: when the call returned or raised, and once its
    returned value was read (wire.READ).  Counted from what was left before the call."""

    __slots__ = ("counted",)

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.counted: dict[int, tuple[Any, int, list[int]]] = {}
        for value in [*args, *[v for _, v in _dict_items(kwargs)]]:
            self.add(value)
            kind = _type(value)
            if kind is list or kind is tuple:
                for item in value[:_READ_ITEMS]:
                    self.add(item)

    def add(self, value: Any) -> None:
        left = None if _id(value) in self.counted else _counted(value)
        if left is not None:
            self.counted[_id(value)] = (value, left, [])

    def mark(self) -> None:
        for it, before, marks in self.counted.values():
            left = _counted(it)
            marks.append(before - (before if left is None else left))

    def of(self, it: Any) -> list[int] | None:
        found = self.counted.get(_id(it))
        return found[2] if found is not None and found[0] is it else None


def _call(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    lim: EncodeLimits,
    shown: dict[str, Any] | None = None,
) -> Callable[[], dict[str, Any]]:
    arg_lim = lim.arguments()

    def work() -> dict[str, Any]:
        before: dict[str, Any] = {}
        if shown is not None and shown["status"] == "loaded":
            # For rendering the call at gen time: a second copy of the input, so encoding it
            # (which consumes iterators) leaves the arguments of the real call untouched.
            before["args_in"], before["kwargs_in"] = _shown(shown, arg_lim)
            if "ctor_in" in shown:
                before["ctor_in"] = shown["ctor_in"]
        probes = Probes(args, kwargs)  # drawn before the call can change its arguments
        reads = ArgReads(args, kwargs) if lim.reads else None
        try:
            if _RANDOM_STATE:
                _SET_RANDOM_STATE(_RANDOM_STATE[0])
            value = fn(*args, **kwargs)
            if _type(value) is _CoroutineType:
                value = _drive(value)
            if reads is not None:
                reads.mark()  # returned: before its value is read
            out: dict[str, Any] = {"status": _RETURNED, "value": encode(value, lim, probes)}
        except BaseException as exc:
            if _type(exc) is _Timeout:
                raise
            if reads is not None:
                reads.mark()
            out = {"status": _RAISED, "exc": exception_record(exc)}
        if reads is not None:
            reads.mark()  # the returned value read (a raise: nothing more to read)
        # A function without a verified name the arguments hold after the call (a `self`'s
        # `self._sort_key = lambda x: None`, made in `__init__`) is probed as a returned one is.
        out["args"] = [encode(a, arg_lim, probes, reads=reads) for a in args]
        out["kwargs"] = {k: encode(v, arg_lim, probes, reads=reads) for k, v in _dict_items(kwargs)}
        out.update(before)
        return out

    return work


def _shown(loaded: dict[str, Any], lim: EncodeLimits) -> tuple[list[Any], dict[str, Any]]:
    """The arguments before the call, each encoded, but one that is the very object of an
    earlier one (a list or an iterator passed twice), which is named after it (wire.SAME):
    encoding it again would show an iterator read empty by the first."""
    where: dict[int, tuple[Any, str]] = {}

    def once(value: Any, place: str) -> Any:
        seen = where.get(_id(value))
        if seen is not None and seen[0] is value:
            return {"t": _SAME, "v": seen[1]}
        kind = _type(value)
        if not _is_in(kind, _SCALARS) and kind is not tuple and kind is not frozenset:
            where[_id(value)] = (value, place)  # the empty tuple is one object everywhere
        return encode(value, lim)

    args = [once(a, f"args[{n}]") for n, a in enumerate(loaded["args"])]
    kwargs = {k: once(v, f"kwargs[{k!r}]") for k, v in _dict_items(loaded["kwargs"])}
    return args, kwargs


class Sequence:
    """A call sequence to replay on the job's target (`replay`): its steps, each ``(name,
    pickled (args, kwargs))``, or with `recorded` the outcomes its recording saw, given back."""

    __slots__ = ("recorded", "steps")

    def __init__(self, steps: Any, recorded: Any) -> None:
        if _type(steps) is not tuple or (recorded is not None and _type(recorded) is not tuple):
            raise TypeError("a call sequence is a tuple of steps")
        self.steps = steps
        self.recorded = recorded


def _unpack(data: bytes, shown: Callable[[Any, Any], None] | None = None) -> Any:
    """`(args, kwargs)` from an input's pickle, building the call a recipe describes; `shown`
    sees a recipe's class-call arguments before `self` is built from them."""
    loaded = _pickle_loads(data)
    if _type(loaded) is not tuple or len(loaded) not in (4, 8) or _type(loaded[0]) is not str:
        return loaded
    if loaded[0] == _SEQUENCE and len(loaded) == 4:
        return (Sequence(loaded[1], loaded[2]),), {}
    if loaded[0] == _RECIPE and len(loaded) == 4:
        _, seed, positional, keywords = loaded
        ctor: Any = None
        build: Any = False
        c_positional: Any = {}
        c_keywords: Any = {}
    elif loaded[0] == _RECIPE_CTOR and len(loaded) == 8:
        _, seed, ctor, build, positional, keywords, c_positional, c_keywords = loaded
    else:
        raise TypeError("an input must be (args tuple, kwargs dict) or a recipe")
    if _type(seed) is not bytes:
        raise TypeError("a recipe's seed is the pickled call")
    args, kwargs = _replaced(_pickle_loads(seed), positional, keywords)
    if _type(ctor) is bytes and args:
        c_args, c_kwargs = _replaced(_pickle_loads(ctor), c_positional, c_keywords)
        if shown is not None:
            shown(c_args, c_kwargs)
        if build is True:
            args = (_type(args[0])(*c_args, **c_kwargs), *args[1:])
    return args, kwargs


def _replaced(call: Any, positional: Any, keywords: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The pickled call `(args, kwargs)` with a recipe's arguments replaced."""
    if _type(positional) is not dict or _type(keywords) is not dict:
        raise TypeError("a recipe replaces arguments by position and by keyword")
    args, kwargs = call
    args, kwargs = list(args), dict(kwargs)
    for position, value in _dict_items(positional):
        if _type(position) is not int or not 0 <= position < len(args):
            raise TypeError("a recipe replaces an argument the seed call does not have")
        args[position] = value
    for name, value in _dict_items(keywords):
        kwargs[str(name)] = value
    return tuple(args), kwargs


def _load(blob: str, lim: EncodeLimits | None = None) -> Callable[[], dict[str, Any]]:
    """Load one input; with `lim`, a recipe's class-call arguments are reported as `ctor_in`."""

    def work() -> dict[str, Any]:
        ctor_in: dict[str, Any] = {}

        def shown(c_args: Any, c_kwargs: Any) -> None:
            if lim is not None:
                ctor_in["args"] = [encode(a, lim) for a in c_args]
                ctor_in["kwargs"] = {k: encode(v, lim) for k, v in _dict_items(c_kwargs)}

        try:
            try:
                args, kwargs = _unpack(_a2b_base64(blob), shown)
            finally:
                _name_by_value()
            if _type(args) is list:
                args = tuple(args)
            if _type(args) is not tuple or _type(kwargs) is not dict:
                raise TypeError("an input must be (args tuple, kwargs dict)")
        except BaseException as exc:
            if _type(exc) is _Timeout:
                raise
            return {"status": _LOAD_ERROR, "msg": _exc_summary(exc)}
        loaded = {"status": "loaded", "args": args, "kwargs": kwargs}
        if ctor_in:
            loaded["ctor_in"] = ctor_in
        return loaded

    return work


def _exc_summary(exc: BaseException) -> str:
    record = exception_record(exc)
    return (record["type"] + ": " + record["msg"])[:_MSG_CAP]
