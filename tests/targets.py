"""A made-up target for tests of code that reads a target's names, kind and signature only."""

from __future__ import annotations

from typing import Any

from replicate.core.records import CallKind, Span, Target

ONE_LINE = Span(start_byte=0, end_byte=1, start_line=1, end_line=1)


def made_target(
    qualname: str = "f",
    kind: CallKind = "function",
    signature: str = "def f(): ...",
    body_indent: str = "    ",
    **fields: Any,
) -> Target:
    """A target of module `m` (m.py) with one-line spans; `fields` are Target's other fields."""
    return Target(
        path="m.py",
        module="m",
        qualname=qualname,
        kind=kind,
        signature=signature,
        def_span=ONE_LINE,
        body_span=ONE_LINE,
        body_indent=body_indent,
        body_statements=1,
        **fields,
    )
