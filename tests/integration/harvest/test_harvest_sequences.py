"""Call sequences recorded by the real plugin in a subprocess, in the same run as the targets'
calls: the class's methods are wrapped twice (a target's recorder, then the sequence's step) and
its `__init__` three times (the step, then the construction memory of method targets)."""

from __future__ import annotations

import base64
import pickle
from pathlib import Path

import pytest

from replicate.core import ClassRef
from replicate.harvest.call_sequences import SequenceBudget, read_sequences, sequence_config
from tests.integration.harvest.test_harvest_plugin import CORE, KEYS, TESTS, Harvest, _run_plugin

FILES = {
    "pkg/__init__.py": "from pkg.core import double\n",
    "pkg/core.py": CORE,
    "tests/test_core.py": TESTS,
}
BOX = ClassRef(path="pkg/core.py", module="pkg.core", qualname="Box")


@pytest.fixture(scope="module")
def harvest(tmp_path_factory: pytest.TempPathFactory) -> Harvest:
    settings = sequence_config({BOX.key: BOX}, SequenceBudget())
    return _run_plugin(tmp_path_factory.mktemp("sequences"), FILES, KEYS, settings)


def test_the_tests_pass_and_the_class_is_wrapped(harvest: Harvest) -> None:
    assert harvest.exit_code == 0, harvest.log[-2000:]
    wrapped = [r for r in harvest.records if r["rec"] == "sequence_wrap"]
    assert wrapped == [{"rec": "sequence_wrap", "key": BOX.key, "ok": True, "reason": ""}]


def test_sequences_of_the_tests_instances(harvest: Harvest) -> None:
    found = read_sequences(harvest.records, {BOX.key: BOX})[BOX.key]
    by_steps = {tuple(s.name for s in seq.steps): seq for seq in found}
    assert set(by_steps) == {("__init__", "grow"), ("__init__",)}
    tested = by_steps[("__init__", "grow")]
    assert tested.origin == "tests/test_core.py::test_box" and tested.visible
    assert pickle.loads(base64.b64decode(tested.steps[1].args_b64)) == ((2,), {})
    assert pickle.loads(base64.b64decode(tested.steps[1].result_b64)) == 3
    assert not by_steps[("__init__",)].visible  # built by `Box.make`, the library's code


def test_the_targets_calls_are_recorded_as_before(harvest: Harvest) -> None:
    """The method target's call still carries the class call that built `self`: the sequence
    recorder wraps `__init__` before the construction memory does."""
    (grow,) = [r for r in harvest.records if r["rec"] == "call" and r["key"] == "pkg.core.Box.grow"]
    assert pickle.loads(base64.b64decode(grow["ctor_b64"])) == ((1,), {})
    assert len(harvest.calls("pkg.core.Box.half")) == 2


def test_without_classes_no_sequence_is_recorded(tmp_path: Path) -> None:
    done = _run_plugin(tmp_path, FILES, {})
    assert done.exit_code == 0 and not [r for r in done.records if r["rec"] == "sequence"]
