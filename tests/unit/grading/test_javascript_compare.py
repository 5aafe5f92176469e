"""A JavaScript outcome against the stored one: status, value, thrown class and message,
arguments after the call; and the prompt of a JavaScript task in its own terms."""

from __future__ import annotations

from replicate.core import Span, Target, render_prompt
from replicate.grading.javascript import compare_node
from replicate.jail.node import NodeOutcome, Status, Thrown
from replicate.values import javascript as js

RETURNED = NodeOutcome(Status.RETURNED, value=js.Num.of(2), args=(js.Num.of(1),))
RAISED = NodeOutcome(Status.RAISED, thrown=Thrown("Error", "val is empty"), args=("",))
STUB = NodeOutcome(Status.RAISED, thrown=Thrown("Error", "not implemented"), args=("",))


def test_the_same_outcome_matches() -> None:
    assert compare_node(RETURNED, RETURNED) is None
    assert compare_node(RAISED, RAISED) is None


def test_each_difference_is_found() -> None:
    other_value = NodeOutcome(Status.RETURNED, value=js.Num.of(-0.0), args=(js.Num.of(1),))
    assert compare_node(RETURNED, other_value).kind == "value"  # type: ignore[union-attr]
    mutated = NodeOutcome(Status.RETURNED, value=js.Num.of(2), args=(js.Num.of(5),))
    assert compare_node(RETURNED, mutated).kind == "args-after-call"  # type: ignore[union-attr]
    assert compare_node(RETURNED, RAISED).kind == "status"  # type: ignore[union-attr]
    timeout = NodeOutcome(Status.TIMEOUT)
    assert compare_node(timeout, timeout) is not None  # nothing graded matches nothing


def test_the_stubs_throw_is_told_from_the_originals_by_its_message() -> None:
    assert compare_node(RAISED, STUB).kind == "exception"  # type: ignore[union-attr]
    assert compare_node(RAISED, STUB, message=False) is None  # the control: by class alone


def test_a_javascript_prompt_speaks_javascript() -> None:
    span = Span(start_byte=0, end_byte=10, start_line=3, end_line=4)
    target = Target(
        path="index.js",
        module="index",
        qualname="parse",
        kind="function",
        signature="function parse(str)",
        def_span=span,
        body_span=span,
        body_indent="  ",
        body_statements=2,
    )
    prompt = render_prompt(target, (), 5, "javascript")
    assert 'throw new Error("not implemented")' in prompt and "```javascript" in prompt
    assert "NotImplementedError" not in prompt and "`return None`" not in prompt
    assert "rescaled" in prompt and "`return undefined`" in prompt  # its baseline, in its terms
    python = render_prompt(target, (), 5)
    assert "`raise NotImplementedError`" in python and "```python" in python
