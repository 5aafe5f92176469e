"""A bare `object()` a library module binds to a name (a sentinel: orderedmultidict 1.0.2's
`itemlist._absent`) pickles by that name in the harvest and encodes as a reference to it in the
runner: every omdict input and outcome holds one, and all 46 of its targets were "outcome not
comparable" without this. The controls: pickle's own way makes a fresh object no `is _absent`
matches, and an unbound bare object still encodes as opaque."""

from __future__ import annotations

import pickle
import sys
import types
from collections.abc import Iterator

import pytest

from replicate.core.records import GradingSettings
from replicate.grading.compare import is_gradable
from replicate.harvest.rebuild import dumps_capped
from replicate.jail.runner.encoding import encode

MODULE = "sentinel_library_fixture"


@pytest.fixture
def library() -> Iterator[types.ModuleType]:
    module = types.ModuleType(MODULE)
    module.__file__ = "/nonexistent/site-packages/sentinel_library_fixture.py"
    module._absent = object()  # type: ignore[attr-defined]
    sys.modules[MODULE] = module
    try:
        yield module
    finally:
        del sys.modules[MODULE]


def _returned(tagged: object) -> dict[str, object]:
    return {"status": "returned", "value": tagged, "args": [], "kwargs": {}}


class Node:
    def __init__(self, key: object) -> None:
        self.key = key


def test_a_bound_sentinel_pickles_by_its_name(library: types.ModuleType) -> None:
    node = Node(library._absent)
    assert pickle.loads(pickle.dumps(node)).key is not library._absent  # the control
    data = dumps_capped(node, 100_000)
    assert data is not None
    assert pickle.loads(data).key is library._absent


def test_an_unbound_bare_object_pickles_as_before() -> None:
    data = dumps_capped([object()], 1000)
    assert data is not None
    assert type(pickle.loads(data)[0]) is object


def test_a_bound_sentinel_encodes_as_a_reference(library: types.ModuleType) -> None:
    tagged = encode(Node(library._absent))
    assert tagged["fields"]["key"] == {"t": "ref", "v": f"{MODULE}._absent"}
    assert is_gradable(_returned(tagged), GradingSettings())


def test_an_unbound_bare_object_stays_opaque(library: types.ModuleType) -> None:
    tagged = encode(Node(object()))  # a candidate's own sentinel is no match for the module's
    assert tagged["fields"]["key"]["t"] == "opaque"
    assert not is_gradable(_returned(tagged), GradingSettings())
