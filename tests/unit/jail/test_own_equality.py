"""Objects of a class a function makes, with an `__eq__` of its own (grader 9): compared by their
state when that `__eq__` says an object equals a copy rebuilt from its fields, both ways; named
`<unverified><__eq__ not by its fields>` (a match for nothing) when it does not."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from replicate.core.records import GradingSettings
from replicate.grading.compare import compare_outcome, is_gradable
from replicate.jail.runner.encoding import encode
from replicate.jail.runner.naming import _EQ_NOT_BY_FIELDS

SETTINGS = GradingSettings()
BY_STATE = "<by state>"
NOT_BY_FIELDS = "<unverified>" + _EQ_NOT_BY_FIELDS

Eq = Callable[[Any, Any], Any]


def by_fields(self: Any, other: Any) -> Any:
    if type(other) is not type(self):
        return NotImplemented
    return (self.left, self.right) == (other.left, other.right)


def by_left(self: Any, other: Any) -> Any:
    return self.left == other.left  # `right` left out of its equality


def always(self: Any, other: Any) -> Any:
    return True  # a candidate's, say: it names its objects, the grader still reads their fields


def by_identity(self: Any, other: Any) -> Any:
    return self is other


def make(eq: Eq | None, slots: bool = False) -> type:
    """A local class, as a factory makes it (its name does not verify), with `eq` its own."""

    class Pair:
        def __init__(self, left: Any, right: Any) -> None:
            self.left, self.right = left, right

    class Slotted:
        __slots__ = ("left", "right")

        def __init__(self, left: Any, right: Any) -> None:
            self.left, self.right = left, right

    made = Slotted if slots else Pair
    if eq is not None:
        made.__eq__ = eq  # type: ignore[assignment, method-assign]
    return made


def returned(value: Any) -> dict[str, Any]:
    return {"status": "returned", "value": encode(value), "args": [], "kwargs": {}}


@pytest.mark.parametrize("slots", [False, True])
@pytest.mark.parametrize("eq", [by_fields, by_left, always])
def test_an_eq_its_fields_decide_compares_by_state(eq: Eq, slots: bool) -> None:
    cls = make(eq, slots)
    expected = returned(cls("ab", "cd"))
    assert expected["value"]["type"] == f"{BY_STATE}{cls.__module__}.{cls.__qualname__}"
    assert is_gradable(expected, SETTINGS)
    alike = make(eq, slots)  # a candidate's class of that name: alike by fields
    assert compare_outcome(expected, returned(alike("ab", "cd")), SETTINGS) is None
    # by every field, the one its `__eq__` leaves out too: a caller reads `right` as well
    assert compare_outcome(expected, returned(alike("ab", "xx")), SETTINGS) is not None


def test_an_eq_its_fields_do_not_decide_is_not_comparable() -> None:
    """The positive control: the same objects, with an `__eq__` by identity, are refused."""
    cls = make(by_identity)
    expected = returned(cls("ab", "cd"))
    assert expected["value"]["type"] == f"{NOT_BY_FIELDS}{cls.__module__}.{cls.__qualname__}"
    assert not is_gradable(expected, SETTINGS)


def raises(self: Any, other: Any) -> Any:
    raise TypeError("cannot compare")


def truthy(self: Any, other: Any) -> Any:
    return 1  # true, but not `True`: an array's answer, say


@pytest.mark.parametrize("eq", [raises, truthy, staticmethod(by_fields)])
def test_an_eq_that_does_not_say_true_is_not_by_fields(eq: Any) -> None:
    assert encode(make(eq)("a", "b"))["type"].startswith(NOT_BY_FIELDS)


def test_an_eq_that_answers_differently_each_time_is_not_deterministic() -> None:
    """Its answer is part of the name: two runs that differ differ in the outcome, which the
    golden runs drop as nondeterministic."""
    answers = iter([True, True, False, False])
    cls = make(lambda self, other: next(answers))
    first, second = returned(cls("a", "b")), returned(cls("a", "b"))
    assert compare_outcome(first, second, SETTINGS) is not None


def test_its_eq_leaves_the_object_and_its_fields_as_they_were() -> None:
    cls = make(by_fields)
    kept = cls(["a"], {"k": 1})
    assert encode(kept)["fields"] == encode(make(None)(["a"], {"k": 1}))["fields"]
    assert kept.__dict__ == {"left": ["a"], "right": {"k": 1}}


@dataclass
class Verified:
    left: str

    def __eq__(self, other: object) -> bool:
        return True  # never called: a class whose name verifies is compared by fields


def test_a_class_whose_name_verifies_keeps_its_name() -> None:
    name = encode(Verified("a"))["type"]
    assert name == f"{__name__}.Verified"
