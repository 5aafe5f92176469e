"""The search behind `visible_task_ids`: a body is found whatever its indentation, never inside a
longer name, and one pass over a text finds every body of a batch."""

from __future__ import annotations

from replicate.core.visibility import ANCHOR, BodyIndex, normalise, occurs

LONG = "total = 0\n    for x in items:\n        total += x\n    return total"


def test_a_body_is_found_whatever_its_indentation_and_line_breaks() -> None:
    index = BodyIndex({"sum": LONG, "other": "return None"})
    text = "def f(items):\n        total = 0\n        for x in items: total += x\n\treturn total\n"
    assert index.found_in(text) == frozenset({"sum"})
    assert index.visible([text, "x = 1"], own="sum") == ()  # its own body does not count
    assert index.visible(["y", text], own="other") == ("sum",)


def test_a_body_is_not_found_inside_a_longer_name() -> None:
    body = normalise("return self.balance")
    assert occurs(body, "x; return self.balance\n")
    assert not occurs(body, "return self.balance_cents")
    assert not occurs(body, "xreturn self.balance")
    assert occurs(body, "return self.balance_cents; return self.balance")  # the second one


def test_short_and_long_bodies_and_a_missing_one() -> None:
    assert len(normalise(LONG)) >= ANCHOR > len("return x")
    index = BodyIndex({"long": LONG, "short": "return x", "empty": "   "})
    assert index.found_in(f"a\n{LONG}\nb") == frozenset({"long"})
    assert index.found_in("return x") == frozenset({"short"})
    assert index.found_in(LONG.replace("total += x", "total -= x")) == frozenset()


def test_it_agrees_with_a_plain_search() -> None:
    """The anchored lookup finds what `in` on normalised text finds, on texts built to hold
    bodies at every offset."""
    bodies = {f"t{i}": f"value = {i} * scale\n    return value + {i}" for i in range(30)}
    index = BodyIndex(bodies)
    for start in range(0, 27, 3):
        text = "pad " * start + "\n".join(bodies[f"t{i}"] for i in range(start, start + 4))
        plain = {k for k, v in bodies.items() if normalise(v) in normalise(text)}
        assert index.found_in(text) == plain and len(plain) == 4


def test_a_task_of_several_bodies_is_shown_by_any_one_of_them() -> None:
    """A class task hides each member's body: a text showing one member shows part of it."""
    first, second = LONG, "return self.items.pop() if self.items else None"
    index = BodyIndex({"cls": (first, second), "fn": "return 42"})
    assert index.found_in(f"def pop(self):\n    {second}\n") == {"cls"}
    assert index.found_in("def other(self): pass") == frozenset()
    assert index.found_in(f"x = 1; {first}; return 42") == {"cls", "fn"}
