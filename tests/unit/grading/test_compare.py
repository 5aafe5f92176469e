"""Trusted-side frame parsing, outcome comparison and rendering.

Tagged values are built with the runner's own `encode` (in this process), so these tests pin the
contract between the two sides as well as the comparison rules.
"""

from __future__ import annotations

import collections
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replicate.core.records import GradingSettings
from replicate.grading.compare import (
    Mismatch,
    compare_outcome,
    is_gradable,
    same_outcome,
)
from replicate.jail import wire
from replicate.jail.calltime import CallClock, timed_frames
from replicate.jail.frames import ParsedRun, collect_frames
from replicate.jail.runner.base import EncodeLimits
from replicate.jail.runner.encoding import encode
from replicate.jail.runner.probes import Probes
from replicate.values.rendering import render, render_call, render_outcome

SETTINGS = GradingSettings()
NONCE = "n0nce"


def returned(value: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    return {
        "status": "returned",
        "value": encode(value),
        "args": [encode(a) for a in args],
        "kwargs": {k: encode(v) for k, v in kwargs.items()},
        "t": 0.01,
    }


def raised(type_name: str, msg: str = "bad") -> dict[str, Any]:
    return {"status": "raised", "exc": {"type": type_name, "msg": msg}, "args": [], "kwargs": {}}


def differ(expected: Any, got: Any, cfg: GradingSettings = SETTINGS) -> Mismatch | None:
    return compare_outcome(returned(expected), returned(got), cfg)


# ---------------------------------------------------------------- frames


def frame(obj: Any, nonce: str = NONCE) -> bytes:
    return f"{nonce} {json.dumps(obj)}\n".encode()


def _parsed(channel: bytes, nonce: str) -> ParsedRun:
    """The channel as the trusted side reads it, no arrival noted (so no per-call limit)."""
    return collect_frames(timed_frames(channel, (), nonce, CallClock(order=(), call_timeout_s=1.0)))


def test_the_channel_keeps_only_well_formed_frames_with_the_nonce() -> None:
    good = {"status": "returned", "value": encode(1), "args": [], "kwargs": {}}
    forged = {"status": "returned", "value": encode(2), "args": [], "kwargs": {}}
    channel = b"".join(
        [
            frame({"event": "started"}),
            frame({"event": "ready"}),
            frame({"event": "result", "i": 0, "outcome": good}),
            frame({"event": "result", "i": 0, "outcome": forged}),  # duplicate: first wins
            frame({"event": "result", "i": 1, "outcome": forged}, nonce="other"),  # wrong nonce
            json.dumps({"event": "result", "i": 2, "outcome": forged}).encode() + b"\n",
            f"{NONCE} {{not json\n".encode(),
            frame({"event": "result", "i": True, "outcome": forged}),  # bool is not an index
            frame({"event": "result", "i": 3, "outcome": {"status": "great"}}),
            frame({"event": "nonsense"}),
            frame({"event": "done"}),
            f"{NONCE} ".encode() + b'{"event": "result", "i": 4, "outc',  # cut mid-write
        ]
    )
    run = _parsed(channel, NONCE)
    assert run.ready and run.done and run.started
    assert dict(run.outcomes) == {0: good}
    assert run.rejected_frames == 8
    assert run.import_error is None


def test_the_channel_import_error_and_empty_channel() -> None:
    channel = frame({"event": "started"})
    channel += frame({"event": "import_error", "type": "builtins.SyntaxError", "msg": "x"})
    channel += frame({"event": "import_error", "type": "builtins.ValueError", "msg": "y"})
    run = _parsed(channel, NONCE)
    assert run.import_error == "builtins.SyntaxError: x"
    assert run.started and not run.ready and run.rejected_frames == 1
    crashed = _parsed(frame({"event": "started"}), NONCE)
    assert crashed.started and not crashed.ready and crashed.import_error is None
    empty = _parsed(b"", NONCE)
    assert not empty.started and not empty.done and empty.outcomes == {}


def test_outcomes_are_read_only() -> None:
    run = _parsed(frame({"event": "result", "i": 0, "outcome": returned(1)}), NONCE)
    with pytest.raises(TypeError):
        run.outcomes[1] = {}  # type: ignore[index]


# ---------------------------------------------------------------- values


def test_identical_outcomes_match() -> None:
    value = {"a": [1, (2.5, None)], "b": {b"x", frozenset({1})}}
    assert differ(value, value) is None
    assert is_gradable(returned(value), SETTINGS)


@pytest.mark.parametrize(
    ("expected", "got"),
    [
        (0.0, -0.0),
        (1, True),
        (0, False),
        (1, 1.0),
        ([1, 2], (1, 2)),
        ({1, 2}, frozenset({1, 2})),
        ("1", 1),
        (b"a", bytearray(b"a")),
        ({"a": 1}, collections.OrderedDict(a=1)),
        ({"a": 1}, collections.Counter(a=1)),
        (float("inf"), float("-inf")),
        (float("nan"), 0.0),
        ([1, 2], [1, 2, 3]),
        ({"a": 1}, {"a": 1, "b": 2}),
        (None, 0),
    ],
)
def test_values_that_differ(expected: Any, got: Any) -> None:
    mismatch = differ(expected, got)
    assert mismatch is not None and mismatch.kind == "value"


def test_floats_nan_and_tolerance() -> None:
    nan = float("nan")
    assert differ(nan, nan) is None
    assert differ([nan, -0.0], [nan, -0.0]) is None
    assert differ(float("inf"), float("inf")) is None
    assert differ(1.0, 1.0 + 1e-12) is None  # within the default rel_tol 1e-9
    assert differ(1.0, 1.001) is not None
    strict = GradingSettings(float_rel_tol=0.0)
    assert differ(1.0, 1.0 + 1e-12, strict) is not None
    loose = GradingSettings(float_abs_tol=1e-6)
    assert differ(0.0, 1e-9, loose) is None
    assert differ(0.0, -0.0, loose) is not None  # the sign of zero is never tolerated
    assert differ(1 + 2j, 1 + 2j) is None
    assert differ(complex(0.0, 0.0), complex(0.0, -0.0)) is not None


def test_dicts_unordered_but_ordered_dicts_ordered() -> None:
    assert differ({"a": 1, "b": 2}, {"b": 2, "a": 1}) is None
    assert differ(collections.Counter("aab"), collections.Counter("baa")) is None
    od = collections.OrderedDict
    assert differ(od(a=1, b=2), od(a=1, b=2)) is None
    assert differ(od(a=1, b=2), od(b=2, a=1)) is not None
    assert differ({1: "x"}, {True: "x"}) is not None  # equal keys in Python, not here


def test_mismatch_path_and_renderings() -> None:
    mismatch = differ([0, 1, {"a": [1, 2]}], [0, 1, {"a": [1, 3]}])
    assert mismatch == Mismatch("value", "return[2]['a'][1]", "2", "3")
    obj = compare_outcome(returned(None, [1]), returned(None, [1, 2]), SETTINGS)
    assert obj == Mismatch("args-after-call", "args[0]", "[1]", "[1, 2]")
    kw = compare_outcome(returned(None, key=[1]), returned(None, key=[2]), SETTINGS)
    assert kw == Mismatch("args-after-call", "kwargs['key'][0]", "1", "2")


class Base:
    def __init__(self, x: int) -> None:
        self.x = x


class Other:
    def __init__(self, x: int) -> None:
        self.x = x


class Sub(int):
    pass


class AlwaysEq:
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


def test_objects_subclasses_and_always_equal() -> None:
    assert differ(Base(1), Base(1)) is None
    mismatch = differ(Base(1), Base(2))
    assert mismatch is not None and mismatch.path == "return.x"
    assert differ(Base(1), Other(1)) is not None
    assert Sub(3) == 3 and differ(3, Sub(3)) is not None
    assert AlwaysEq() == 5 and differ(5, AlwaysEq()) is not None  # fools `==`, not us


def test_never_matching_nodes() -> None:
    for node in ({"t": "opaque", "type": "x.Y"}, {"t": "deep"}, {"t": "toolarge"}):
        outcome = {"status": "returned", "value": node, "args": [], "kwargs": {}}
        assert compare_outcome(outcome, outcome, SETTINGS) is not None
        assert not is_gradable(outcome, SETTINGS)
    cycle = {"status": "returned", "value": {"t": "cycle"}, "args": [], "kwargs": {}}
    assert compare_outcome(cycle, cycle, SETTINGS) is None
    ref = {"status": "returned", "value": {"t": "ref", "v": "<unverified>m.f"}}
    assert compare_outcome(ref, ref, SETTINGS) is not None
    unverified = raised("<unverified>builtins.ValueError")
    assert compare_outcome(unverified, unverified, SETTINGS) is not None


def test_generators_compare_items_bound_and_exception() -> None:
    def gen(n: int, fail: bool) -> Any:
        yield from range(n)
        if fail:
            raise ValueError("midway")

    limits = EncodeLimits(max_items=3)

    def outcome(n: int, fail: bool) -> dict[str, Any]:
        return {
            "status": "returned",
            "value": encode(gen(n, fail), limits),
            "args": [],
            "kwargs": {},
        }

    assert compare_outcome(outcome(2, True), outcome(2, True), SETTINGS) is None
    assert compare_outcome(outcome(2, True), outcome(2, False), SETTINGS) is not None
    assert compare_outcome(outcome(5, False), outcome(4, False), SETTINGS) is None  # both cut at 3
    assert compare_outcome(outcome(3, False), outcome(4, False), SETTINGS) is not None
    assert render(encode(gen(5, False), limits)) == "<generator: [0, 1, 2, ...]>"
    assert render(encode(gen(1, True))) == "<generator: [0] then raise ValueError('midway')>"


# ---------------------------------------------------------------- statuses and exceptions


def test_exceptions_by_type_and_message_only_when_asked() -> None:
    expected = raised("builtins.ValueError", "bad")
    assert compare_outcome(expected, raised("builtins.ValueError", "other"), SETTINGS) is None
    strict = GradingSettings(compare_exception_message=True)
    assert compare_outcome(expected, raised("builtins.ValueError", "other"), strict) is not None
    mismatch = compare_outcome(expected, raised("builtins.TypeError"), SETTINGS)
    assert mismatch == Mismatch(
        "exception", "raise", "raise ValueError('bad')", "raise TypeError('bad')"
    )
    lookalike = compare_outcome(expected, raised("cand.ValueError"), SETTINGS)
    assert lookalike is not None and lookalike.kind == "exception"


def test_status_mismatches() -> None:
    value = returned(1)
    error = raised("builtins.KeyError", "'k'")
    assert compare_outcome(value, error, SETTINGS) == Mismatch(
        "exception", "return", "1", "raise KeyError(\"'k'\")"
    )
    assert compare_outcome(error, value, SETTINGS) is not None
    timeout = {"status": "timeout", "t": 2.0}
    got = compare_outcome(value, timeout, SETTINGS)
    assert got is not None and got.kind == "timeout" and got.got == "<timeout after 2.0s>"
    expected_timeout = compare_outcome(timeout, timeout, SETTINGS)
    assert expected_timeout is not None and expected_timeout.kind == "timeout"
    missing = compare_outcome(value, None, SETTINGS)
    assert missing == Mismatch("missing", "", "1", "<no result>")
    load = compare_outcome(value, {"status": "load_error", "msg": "boom"}, SETTINGS)
    assert load is not None and load.kind == "load_error"


def test_same_outcome_is_exact_and_ignores_duration() -> None:
    a = returned({"x": 1.0})
    b = dict(returned({"x": 1.0}), t=9.5)
    assert same_outcome(a, b)
    assert not same_outcome(a, returned({"x": 1.0 + 1e-15}))  # no tolerance here
    assert not same_outcome(a, returned({"x": 1}))
    reordered = {"status": "returned", "value": {"v": a["value"]["v"], "t": "dict"}}
    assert same_outcome({k: a[k] for k in ("status", "value")}, reordered)


def _reordered(node: Any) -> Any:
    if type(node) is dict:
        return {k: _reordered(node[k]) for k in reversed(node)}
    return [_reordered(item) for item in node] if type(node) is list else node


def _retyped(node: Any) -> Any:
    if type(node) is dict:
        return {k: _retyped(v) for k, v in node.items()}
    if type(node) is list:
        return [_retyped(item) for item in node]
    if type(node) is bool:
        return int(node)
    return float(node) if type(node) is int and abs(node) < 2**53 else node


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(
    value=json_values,
    other=json_values,
    how=st.sampled_from(["same", "reordered", "retyped", "other"]),
)
def test_same_outcome_agrees_with_canonical_json(value: Any, other: Any, how: str) -> None:
    """The fast path (equal `marshal` bytes) never changes the answer of the canonical one."""
    second = {
        "same": json.loads(json.dumps(value)),
        "reordered": _reordered(value),
        "retyped": _retyped(value),
        "other": other,
    }[how]
    a, b = {"status": "returned", "value": value}, {"value": second, "status": "returned"}

    def canonical(x: Any) -> str:
        return json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=True)

    assert same_outcome(a, b) == (canonical(a) == canonical(b))


# ---------------------------------------------------------------- untrusted shapes

tags = st.sampled_from(
    ["int", "list", "dict", "obj", "sub", "iter", "float", "exc", "odict", wire.PROBED, wire.PROBE]
)
nodes = st.recursive(
    st.fixed_dictionaries({"t": tags, "v": json_values}),
    lambda inner: st.fixed_dictionaries(
        {"t": tags, "v": st.lists(inner | st.lists(inner, max_size=2), max_size=3)}
    ),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(got=nodes | json_values)
def test_malformed_got_never_crashes_and_never_matches(got: Any) -> None:
    expected = returned([1, {"a": (2.5, "s")}])
    outcome = {"status": "returned", "value": got, "args": got, "kwargs": got}
    assert compare_outcome(expected, outcome, SETTINGS) is not None
    assert isinstance(render(got), str)
    assert isinstance(render_outcome(outcome), str)


# ---------------------------------------------------------------- rendering


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ([1, 2, (3, 4)], "[1, 2, (3, 4)]"),
        ((1,), "(1,)"),
        ({"a": None}, "{'a': None}"),
        (set(), "set()"),
        ({2, 1}, "{1, 2}"),
        (frozenset(), "frozenset()"),
        (-0.0, "-0.0"),
        (float("nan"), "nan"),
        (b"\x00a", "b'\\x00a'"),
        (bytearray(b"a"), "bytearray(b'a')"),
        (range(1, 5), "range(1, 5)"),
        (len, "len"),
        (ValueError("bad"), "ValueError('bad')"),
        (Base(1), "Base(x=1)"),
        (Sub(3), "Sub(3)"),
        (collections.OrderedDict(a=1), "OrderedDict({'a': 1})"),
        (collections.deque([1]), "deque([1])"),
        (True, "True"),
        (1 + 2j, "(1+2j)"),
    ],
)
def test_render(value: Any, text: str) -> None:
    assert render(encode(value)) == text


def test_a_name_rebuilt_by_value_renders_as_the_tests_spell_it() -> None:
    """The runner numbers what an input rebuilt by value (`#k`); a prompt shows the name."""
    helper = {"t": "ref", "v": "<by value>test_functional.double#0"}
    assert render(helper) == "double"
    assert render({"t": "ref", "v": "<by value>t.TestX.test_y.<locals>.<lambda>#3"}) == "<lambda>"
    assert render({"t": "ref", "v": "pkg.mod#1"}) == "mod#1"  # only by-value names are cut


def test_render_is_cut_at_the_limit() -> None:
    text = render(encode(list(range(10_000))), limit=30)
    assert text.startswith("[0, 1, 2") and text.endswith("...") and len(text) <= 33
    assert render(encode("x" * 10_000), limit=10) == "'xxxxxxxxx..."
    assert render({"t": "nonsense"}) == "<malformed>"
    assert render_outcome(raised("builtins.ValueError", "bad")) == "raise ValueError('bad')"
    assert render_outcome(raised("<unverified>builtins.ValueError", "bad")).startswith(
        "raise <unverified>builtins.ValueError("
    )


def _held(lock: Any) -> Any:
    lock.acquire()
    return lock


def test_locks_compare_by_exact_type_and_whether_held() -> None:
    import threading

    free, held = threading.Lock(), _held(threading.Lock())
    rfree, rheld = threading.RLock(), _held(_held(threading.RLock()))
    assert encode(free) == {"t": "lock", "held": False}
    assert encode(rheld) == {"t": "rlock", "held": True}  # held twice: still just held
    assert compare_outcome(returned(None, free), returned(None, threading.Lock()), SETTINGS) is None
    assert same_outcome(returned(None, rfree), returned(None, threading.RLock()))
    assert is_gradable(returned(None, [free, rheld]), SETTINGS)
    found = compare_outcome(returned(None, rfree), returned(None, rheld), SETTINGS)
    assert found == Mismatch(
        "args-after-call", "args[0]", "<unlocked _thread.RLock>", "<locked _thread.RLock>"
    )
    found = compare_outcome(returned(free), returned(rfree), SETTINGS)
    assert found is not None and (found.expected, found.got) == (
        "<unlocked _thread.lock>",
        "<unlocked _thread.RLock>",
    )
    assert not same_outcome(returned(held), returned(free))
    for forged in ({"t": "lock", "held": 1}, {"t": "lock"}, {"t": "lock", "held": False, "x": 1}):
        got = {**returned(free), "value": forged}
        assert compare_outcome(returned(free), got, SETTINGS) is not None


# ---------------------------------------------------------------- returned functions, probed


def probed(fn: Any, *args: Any) -> dict[str, Any]:
    """The outcome of a call on `args` that returned `fn`, probed as the runner probes it."""
    value = encode(fn, probes=Probes(args, {}))
    return {"status": "returned", "value": value, "args": [encode(a) for a in args], "kwargs": {}}


def test_returned_functions_compare_by_every_probe() -> None:
    def times(n: int) -> Any:
        return lambda x: x * n

    expected = probed(times(3), 3)
    assert expected["value"]["t"] == wire.PROBED and is_gradable(expected, SETTINGS)
    assert render(expected["value"]) == f"<function: {wire.MAX_PROBES} probes>"
    assert compare_outcome(expected, probed(lambda y: 3 * y, 3), SETTINGS) is None
    assert compare_outcome(expected, probed(times(4), 3), SETTINGS) == Mismatch(
        "value", "return(3)", "9", "12"
    )
    first = expected["value"]["v"][0]
    assert render_call(first) == "(3)" and render(first) == "9"
    no_none = probed(lambda x: 0 if x is None else x * 3, 3)
    found = compare_outcome(expected, no_none, SETTINGS)
    assert found is not None and (found.path, found.got) == ("return(None)", "0")
    assert found.expected.startswith("raise TypeError(")
    fewer = {**expected, "value": {**expected["value"], "v": expected["value"]["v"][:-1]}}
    assert compare_outcome(expected, fewer, SETTINGS) is not None
    assert compare_outcome(expected, probed(times, 3), SETTINGS) is not None  # a named function
    assert compare_outcome(expected, returned(9, 3), SETTINGS) is not None


def test_a_function_a_probe_returns_is_not_probed_again() -> None:
    outcome = probed(lambda x: lambda: x, 1)
    inner = outcome["value"]["v"][0]["v"]
    assert inner["t"] == "ref" and inner["v"].startswith("<unverified>")
    assert not is_gradable(outcome, SETTINGS)


class _Viewed:
    """Like sortedcontainers' SortedSet: the instance keeps methods of its own set as attributes."""

    def __init__(self, items: set[int]) -> None:
        self._set = items
        self.isdisjoint = items.isdisjoint
        self.issubset = items.issubset


class _Escaper:
    """Like markupsafe's EscapeFormatter: keeps a class's classmethod, bound to the class."""

    def __init__(self) -> None:
        self.escape = _Escaper.make

    @classmethod
    def make(cls, text: str) -> str:
        return text


def test_a_classmethod_kept_in_state_has_its_name() -> None:
    # before, the classmethod's function did not verify (its class's dict holds the classmethod
    # wrapper, not the function): `<unverified>`, so the outcome was not comparable
    encoded = encode(_Escaper())
    func = encoded["fields"]["escape"]["func"]
    assert func == {"t": "ref", "v": f"{__name__}._Escaper.make"}
    assert differ(_Escaper(), _Escaper()) is None


def test_builtin_methods_bound_to_an_object_compare_by_that_object() -> None:
    # before, `self._set.isdisjoint` had no name to verify: `<unverified>`, which never matches,
    # so every method of such a class was dropped as "outcome not comparable"
    encoded = encode(_Viewed({1, 2}))
    assert "<unverified>" not in json.dumps(encoded)
    assert encoded["fields"]["isdisjoint"]["func"] == {"t": "ref", "v": "builtins.set.isdisjoint"}
    assert differ(_Viewed({1, 2}), _Viewed({2, 1})) is None
    assert differ(_Viewed({1, 2}), _Viewed({1, 3})) is not None
    assert differ({1}.isdisjoint, {1}.issubset) is not None  # the same object, another method
    assert encode(len) == {"t": "ref", "v": "builtins.len"}  # a module's function keeps its name
