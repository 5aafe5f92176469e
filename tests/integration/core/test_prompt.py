"""TASK.md: what the agent reads."""

from __future__ import annotations

from replicate.core.prompt import render_prompt
from replicate.core.records import CallKind, Example, Span, Target
from tests.integration.minted import Tiny


def _target(kind: CallKind = "function", docstring: str | None = "Clamp value.") -> Target:
    span = Span(start_byte=0, end_byte=10, start_line=7, end_line=9)
    is_method = kind != "function"
    return Target(
        path="src/pkg/core.py",
        module="pkg.core",
        qualname="Box.clamp" if is_method else "clamp",
        kind=kind,
        signature="def clamp(value, low, high):\n",
        docstring=docstring,
        class_name="Box" if is_method else None,
        def_span=span,
        body_span=span,
        body_indent="    ",
        body_statements=3,
    )


def test_function_prompt_has_every_part() -> None:
    examples = (
        Example(call="clamp(5, 0, 3)", outcome="3"),
        Example(call="clamp(1, 2, 3)", outcome="2"),
    )
    text = render_prompt(_target(), examples, hidden_inputs=17)
    assert text.startswith("# Implement `pkg.core.clamp`\n")
    assert "the function `clamp` in `src/pkg/core.py` (line 7)" in text
    assert "```python\ndef clamp(value, low, high):\n```" in text
    assert "## Docstring\n\n```text\nClamp value.\n```" in text
    assert "- `clamp(5, 0, 3)` → `3`" in text and "- `clamp(1, 2, 3)` → `2`" in text
    assert "called on 17 hidden inputs" in text
    assert "weighted by the kind of input" in text and "earns 0" in text
    assert "rescaled so that the best trivial body" in text and "fraction that match" not in text
    assert "Only `src/pkg/core.py` is taken from your workspace" in text
    assert "on `self`" not in text
    assert text.endswith("\n")


def test_sections_are_left_out_when_empty() -> None:
    text = render_prompt(_target(docstring=None), (), hidden_inputs=1)
    assert "## Docstring" not in text and "## Examples" not in text
    assert "## Signature" in text and "## How it is graded" in text


def test_method_kinds_are_named() -> None:
    assert "the method `Box.clamp`" in render_prompt(_target("method"), (), 3)
    assert "and on `self`." in render_prompt(_target("method"), (), 3)
    assert "the class method `Box.clamp`" in render_prompt(_target("classmethod"), (), 3)
    assert "the static method `Box.clamp`" in render_prompt(_target("staticmethod"), (), 3)
    assert "# Implement `pkg.core.Box.clamp`" in render_prompt(_target("staticmethod"), (), 3)


def test_minted_prompt_matches_the_spec(tiny: Tiny) -> None:
    task = tiny.task("tinypkg.core.parse_int")
    assert task.prompt.startswith("# Implement `tinypkg.core.parse_int`")
    assert f"called on {task.spec.hidden_inputs} hidden inputs" in task.prompt
    assert task.spec.hidden_inputs == len(task.inputs)
    assert sum(1 for i in task.inputs if i.provenance == "traced") == 4
    assert len(task.inputs) > 4  # generated inputs reach beyond the tests' four calls
    assert task.spec.examples == ()  # too few traced calls to hold any out for TASK.md
    assert "Parse a decimal integer; raise ValueError on junk." in task.prompt
