"""Renamed calls: one string argument renamed in the whole seed pickle, never a global's name."""

from __future__ import annotations

import base64
import pickle
from typing import Any

import pytest

from replicate.core.records import CallInput, Target
from replicate.inputs.renaming import data_strings, renamed, renamings, strings_and_globals
from replicate.inputs.widening import Seed
from replicate.jail.runner.calling import _unpack
from replicate.values import plain
from tests.unit.inputs.test_inputs import _target as target_of


class Registry:
    """Stands for a repository object that holds names (pickled by reference)."""

    def __init__(self, *names: str) -> None:
        self.plugins = {name: object.__name__ for name in names}
        self.blocked = list(names[:1])


def _call(protocol: int) -> bytes:
    return pickle.dumps(((Registry("alpha", "beta"), "alpha"), {}), protocol=protocol)


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_every_occurrence_is_renamed_and_nothing_else(protocol: int) -> None:
    data = renamed(_call(protocol), "alpha", "zeta")
    assert data is not None
    (registry, name), kwargs = pickle.loads(data)
    assert name == "zeta" and kwargs == {}
    assert registry.plugins == {"zeta": "object", "beta": "object"}
    assert registry.blocked == ["zeta"]
    assert "alpha" not in strings_and_globals(data)[0]


def test_a_long_pickle_is_renamed_across_its_frames() -> None:
    text = "x" * 200_000  # protocol 4 frames the stream; the rewrite drops the frames
    data = renamed(pickle.dumps(((text, "alpha", ["alpha"]), {}), protocol=4), "alpha", "b")
    assert data is not None
    assert pickle.loads(data) == ((text, "b", ["b"]), {})


def test_a_string_that_spells_a_global_is_never_renamed() -> None:
    data = _call(4)
    held, named = strings_and_globals(data)
    assert {"Registry", __name__} <= named and "Registry" in held
    # The control: the same bytes with the class's name rewritten no longer load.
    broken = data.replace(b"\x8c\x08Registry", b"\x8c\x08Registrz")
    with pytest.raises(AttributeError):
        pickle.loads(broken)
    assert renamed(data, "Registry", "Registrz") is None
    assert renamed(data, __name__, "elsewhere") is None
    assert renamed(data, "absent", "x") is None
    assert renamed(b"not a pickle", "alpha", "x") is None


def _target() -> Target:
    return target_of("method", "def is_blocked(self, name):")


def _seed(n: int, registry: Registry, name: Any, returned: bool = True) -> Seed:
    blob = base64.b64encode(pickle.dumps(((registry, name), {}), protocol=4)).decode()
    fields = {"plugins": plain.encode(registry.plugins), "blocked": plain.encode(registry.blocked)}
    nodes = ({"t": "obj", "type": "Registry", "fields": fields}, plain.encode(name))
    return Seed(CallInput(index=n, origin=f"t::{n}", pickle_b64=blob), nodes, {}, returned)


ATTRIBUTES = {"plugins", "blocked"}


def _strings(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(_strings(k) | _strings(v) for k, v in value.items()))
    if isinstance(value, list):
        return set().union(*(_strings(v) for v in value))
    return set()


def test_renamed_calls_hold_a_fresh_name_in_self_and_argument_alike() -> None:
    seeds = [_seed(0, Registry("alpha"), "alpha"), _seed(1, Registry("beta", "gamma"), "gamma")]
    made = renamings(_target(), seeds, first_index=10, limit=12)
    assert [i.index for i in made] == list(range(10, 22))
    arguments, others = set(), set()
    for item in made:
        assert item.provenance == "widened" and not item.visible
        (registry, name), _ = _unpack(base64.b64decode(item.pickle_b64))  # as the runner does
        state = _strings(vars(registry))
        if item.replaced:  # the argument, and the same name wherever `self` holds it
            assert isinstance(registry.plugins, dict)
            assert name in registry.plugins and name not in {"alpha", "beta", "gamma"}
            assert [r.slot for r in item.replaced] == [1]
            assert plain.decode(item.replaced[0].value) == name
            arguments.add(name)
        else:  # another string `self` holds as data: never an attribute's name
            assert name in {"alpha", "gamma"} and set(vars(registry)) == {"plugins", "blocked"}
            seed = {name, "object"} | ({"beta"} if name == "gamma" else set())
            assert len(state - seed - ATTRIBUTES) == 1 and len(seed - state) == 1
            others.add(item.index)
    # The arguments' names and the other strings take turns.
    assert len(arguments) == 6 and len(others) == 6
    assert renamings(_target(), seeds, 10, 12) == made  # deterministic
    assert renamings(_target(), seeds, 10, 12, salt="other") != made


def test_the_encoding_shows_which_strings_are_data() -> None:
    node = {"t": "obj", "type": "Registry", "fields": {"plugins": plain.encode({"a": ["b"]})}}
    assert data_strings(node) == {"a", "b"}
    assert data_strings(plain.encode(("x", 3, {"y": "z"}))) == {"x", "y", "z"}


def test_no_renamed_call_from_a_seed_that_raised_or_from_a_call_without_strings() -> None:
    raised = [_seed(0, Registry("alpha"), "alpha", returned=False)]
    assert renamings(_target(), raised, 0, 8) == ()
    function = _target().model_copy(update={"kind": "function", "class_name": None})
    blob = base64.b64encode(pickle.dumps(((3, 4.5), {}))).decode()
    numbers = Seed(
        CallInput(index=2, pickle_b64=blob), (plain.encode(3), plain.encode(4.5)), {}, True
    )
    assert renamings(function, [numbers], 0, 8) == ()
    # A method's `self` holds "a" and "object" as data, renamed each to fresh names.
    assert len(renamings(_target(), [_seed(1, Registry("a"), 3)], 0, 8)) == 8


def test_a_string_the_library_spells_is_never_renamed() -> None:
    seeds = [_seed(0, Registry("alpha"), "alpha")]
    made = renamings(_target(), seeds, 0, 8, spelled=frozenset({"alpha"}))
    # Only "object" (held as data) is left to rename; the argument and its key stay.
    assert made and all(not item.replaced for item in made)
    for item in made:
        (registry, name), _ = _unpack(base64.b64decode(item.pickle_b64))
        assert name == "alpha" and "alpha" in registry.plugins
        assert registry.plugins["alpha"] != "object"
