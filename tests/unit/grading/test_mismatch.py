"""A mismatch renders its two sides only when they are read: a failing candidate's grade reads
one of its hundreds (the counterexample), and rendering every one cost a sixth of a warm
grade."""

from __future__ import annotations

from typing import Any

import pytest

from replicate.core import GradingSettings
from replicate.grading import compare as compare_module
from replicate.grading import mismatch as mismatch_module
from replicate.grading.compare import compare_outcome
from replicate.grading.mismatch import Mismatch

SETTINGS = GradingSettings()


def _counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[object]:
    calls: list[object] = []
    real = getattr(module, name)

    def counted(node: object) -> str:
        calls.append(node)
        return str(real(node))

    monkeypatch.setattr(module, name, counted)
    return calls


def _returned(value: object) -> dict[str, Any]:
    return {"status": "returned", "value": value, "args": [], "kwargs": {}}


def test_a_side_is_rendered_once_when_first_read() -> None:
    calls: list[str] = []

    def side(text: str) -> str:
        calls.append(text)
        return text

    found = Mismatch("value", "return", lambda: side("1"), lambda: side("2"))
    assert calls == []
    assert (found.expected, found.got, found.expected) == ("1", "2", "1")
    assert calls == ["1", "2"]
    assert found == Mismatch("value", "return", "1", "2")
    assert found != Mismatch("value", "return", "1", "3")


@pytest.mark.parametrize(
    ("expected", "got", "module", "renderer"),
    [
        (
            _returned({"t": "int", "v": "1"}),
            _returned({"t": "int", "v": "2"}),
            compare_module,
            "render",
        ),
        (
            _returned({"t": "int", "v": "1"}),
            {
                "status": "raised",
                "exc": {"type": "NotImplementedError", "msg": ""},
                "args": [],
                "kwargs": {},
            },
            compare_module,
            "render_outcome",
        ),
        (
            {
                "status": "raised",
                "exc": {"type": "KeyError", "msg": "'a'"},
                "args": [],
                "kwargs": {},
            },
            {
                "status": "raised",
                "exc": {"type": "ValueError", "msg": "x"},
                "args": [],
                "kwargs": {},
            },
            mismatch_module,
            "render_exception",
        ),
    ],
)
def test_comparing_renders_nothing_until_the_mismatch_is_read(
    monkeypatch: pytest.MonkeyPatch,
    expected: dict[str, Any],
    got: dict[str, Any],
    module: Any,
    renderer: str,
) -> None:
    calls = _counting(monkeypatch, module, renderer)
    found = compare_outcome(expected, got, SETTINGS)
    assert found is not None
    assert calls == []  # before: both sides were rendered here, for every mismatch
    assert found.expected and found.got
    assert len(calls) == 2
