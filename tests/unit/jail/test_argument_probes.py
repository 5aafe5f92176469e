"""A function without a verified name that an argument holds after the call (prettytable 3.19.0's
`self._sort_key = kwargs["sort_key"] or (lambda x: x)`, made in `__init__`) is probed as a
returned one is: every generated input of its 23 methods was "outcome not comparable" on
`self`'s unnamed lambda. The control: encoded without probes, the lambda is an unverified name,
which matches nothing."""

from __future__ import annotations

from typing import Any

from replicate.core.records import GradingSettings
from replicate.grading.compare import compare_outcome, is_gradable
from replicate.jail.runner.base import EncodeLimits
from replicate.jail.runner.calling import _call
from replicate.jail.runner.encoding import encode

SETTINGS = GradingSettings()


class Table:
    def __init__(self, key: Any = None) -> None:
        self.key = key or (lambda x: x)
        self.rows: list[Any] = []

    def add(self, row: Any) -> None:
        self.rows.append(row)


class Candidate(Table):
    def __init__(self, key: Any = None) -> None:
        self.key = key or (lambda x: None)  # another behaviour, told apart by the probes
        self.rows = []


def _outcome(table: Table) -> dict[str, Any]:
    return _call(Table.add, (table, 3), {}, EncodeLimits())()


def test_an_argument_s_unnamed_function_is_probed() -> None:
    unprobed = {"status": "returned", "value": {"t": "none"}, "args": [encode(Table())]}
    unprobed["kwargs"] = {}
    assert not is_gradable(unprobed, SETTINGS)  # the control
    expected = _outcome(Table())
    assert expected["args"][0]["fields"]["key"]["t"] == "probed"
    assert is_gradable(expected, SETTINGS)
    assert compare_outcome(expected, _outcome(Table()), SETTINGS) is None
    assert compare_outcome(expected, _outcome(Candidate()), SETTINGS) is not None
