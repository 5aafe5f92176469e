"""The shipped sequence recorder (`harvest/sequences.py`) in this process, on a toy class: what
a step is, where a sequence ends, and the per-test and per-class bounds."""

from __future__ import annotations

import base64
import pickle
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

import pytest

from replicate.harvest.by_value_pickler import ByValue
from replicate.harvest.sequences import Sequences

SOURCE = """
class Box:
    def __init__(self, items=()):
        self.items = list(items)
        self.add_all(items[:0])  # a call inside the class call: not a step

    def add(self, item):
        self.items.append(item)
        return len(self.items)

    def add_all(self, items):
        for item in items:
            self.add(item)  # inside a step: not a step
        return self

    def take(self):
        return self.items.pop()

    def snapshot(self):
        return list(self.items)

    def lock(self):
        return LOCK

    def __len__(self):
        return len(self.items)

    def __reduce__(self):
        return (Box, (tuple(self.items),))


class Bigger(Box):
    pass
"""


class _State:
    """What the plugin hands the recorder: its flag, origin, writer and by-value pickler."""

    def __init__(self) -> None:
        self.busy = False
        self.origin = "t.py::one"
        self.by_value = ByValue(None, lambda _: False)
        self.records: list[dict[str, Any]] = []

    def emit(self, record: dict[str, Any]) -> None:
        self.records.append(record)


@pytest.fixture
def toy() -> Iterator[types.ModuleType]:
    module = types.ModuleType("seqtoy")
    exec(SOURCE, module.__dict__)
    module.LOCK = threading.Lock()
    sys.modules["seqtoy"] = module
    yield module
    del sys.modules["seqtoy"]


def _recorder(state: _State, **config: Any) -> Sequences:
    classes = [{"key": "seqtoy.Box", "module": "seqtoy", "qualname": "Box"}]
    recorder = Sequences(
        {"classes": classes, **config}, state, lambda v: pickle.dumps(v, 4), lambda _: True
    )
    assert recorder.wrap(classes[0]) == ""
    return recorder


def _steps(record: dict[str, Any]) -> list[tuple[str, str]]:
    return [(s["name"], s["outcome"]) for s in record["steps"]]


def test_calls_on_an_instance_are_its_steps_in_order(toy: types.ModuleType) -> None:
    state = _State()
    recorder = _recorder(state)
    box = toy.Box([1])
    assert box.add(2) == 2 and box.add_all([3, 4]) is box and len(box) == 4
    with pytest.raises(IndexError):
        toy.Box().take()
    recorder.test_ended()
    first, second = state.records
    assert _steps(first) == [
        ("__init__", "returned"),
        ("add", "returned"),
        ("add_all", "self"),
        ("__len__", "returned"),
    ]
    assert pickle.loads(base64.b64decode(first["steps"][2]["args_b64"])) == (([3, 4],), {})
    assert pickle.loads(base64.b64decode(first["steps"][1]["result_b64"])) == 2
    assert _steps(second) == [("__init__", "returned"), ("take", "raised")]
    assert isinstance(pickle.loads(base64.b64decode(second["steps"][1]["result_b64"])), IndexError)
    assert {r["ending"] for r in state.records} == {"test ended"}
    assert first["origin"] == "t.py::one" and first["visible"] is True


def test_an_argument_an_earlier_step_returned_is_recorded_as_fed_back(
    toy: types.ModuleType,
) -> None:
    state = _State()
    recorder = _recorder(state)
    box = toy.Box([1])
    copy = box.snapshot()
    box.add_all(copy)  # the very list step 1 returned
    box.add_all(list(copy))  # an equal list, not that one
    box.add(box.add(5))  # an int: equal ints are one object without being fed back
    box.add(box)  # the instance itself
    recorder.test_ended()
    (record,) = state.records
    refs = [step.get("refs") for step in record["steps"]]
    assert refs == [None, None, [[0, 1]], None, None, None, [[0, 0]]]


def test_a_step_that_does_not_pickle_ends_the_sequence_before_it(toy: types.ModuleType) -> None:
    state = _State()
    recorder = _recorder(state)
    box = toy.Box()
    box.add(1)
    box.lock()  # returns a lock: the sequence ends here, its prefix kept
    box.add(2)
    recorder.test_ended()
    (record,) = state.records
    assert _steps(record) == [("__init__", "returned"), ("add", "returned")]
    assert record["ending"] == "unpicklable"


def test_a_sequence_stops_at_its_step_limit(toy: types.ModuleType) -> None:
    state = _State()
    recorder = _recorder(state, max_steps=3)
    box = toy.Box()
    for n in range(10):
        box.add(n)
    recorder.test_ended()
    (record,) = state.records
    assert len(record["steps"]) == 3 and record["ending"] == "step limit"


def test_one_test_starts_at_most_a_quarter_of_the_sequences(toy: types.ModuleType) -> None:
    state = _State()
    recorder = _recorder(state, max_sequences=8)
    boxes = [toy.Box() for _ in range(5)]
    recorder.test_ended()
    assert len(state.records) == 2  # 8 // 4
    state.origin = "t.py::two"
    boxes += [toy.Box() for _ in range(5)]
    recorder.test_ended()
    assert [r["origin"] for r in state.records].count("t.py::two") == 2
    for _ in range(3):
        boxes += [toy.Box() for _ in range(5)]
        recorder.test_ended()
    assert len(state.records) == 8  # the class's bound, over all tests
    assert len(boxes) == 25


def test_subclass_instances_and_busy_moments_are_not_recorded(toy: types.ModuleType) -> None:
    state = _State()
    recorder = _recorder(state)
    toy.Bigger([1]).add(2)  # its methods may differ: not this class's sequence
    box = toy.Box()
    state.busy = True  # the plugin pickling: calls it makes are not steps
    box.add(1)
    state.busy = False
    pickle.dumps(box)  # `__reduce__` is never a step
    recorder.test_ended()
    (record,) = state.records
    assert _steps(record) == [("__init__", "returned")]


def test_unwrapped_the_class_records_nothing(toy: types.ModuleType) -> None:
    """The positive control of the tests above: without `wrap`, no records at all."""
    state = _State()
    recorder = Sequences({}, state, lambda v: pickle.dumps(v, 4), lambda _: True)
    toy.Box([1]).add(2)
    recorder.test_ended()
    assert state.records == []
