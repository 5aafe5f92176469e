"""The reference's definition as the mutator reads it: whole, decorated, dedented."""

from __future__ import annotations

import ast

import pytest

from replicate.core import Span
from replicate.gen.mutants import mutants
from replicate.gen.strength import definition_text
from replicate.languages.python_extract import extract_targets, parse_tree

SOURCE = b'''class Money:
    @staticmethod
    def format_cents(cents):
        """Cents as money."""
        sign = "-" if cents < 0 else ""
        units, rest = divmod(abs(cents), 100)
        return f"{sign}{units}.{rest:02d}"

    def plain(self, n):
        return n + 1
'''


def _span(qualname: str) -> Span:
    targets = extract_targets(SOURCE, parse_tree(SOURCE), "m.py", "m")
    return next(t for t in targets if t.qualname == qualname).def_span


def test_a_decorated_method_parses_whole_and_has_mutants() -> None:
    span = _span("Money.format_cents")
    text = definition_text(SOURCE, span)
    func = ast.parse(text).body[0]
    assert isinstance(func, ast.FunctionDef) and func.decorator_list
    assert len(mutants(text)) >= 5
    # the positive control: cut at the span's start, as before, the text does not parse
    with pytest.raises(SyntaxError):
        ast.parse(SOURCE[span.start_byte : span.end_byte].decode())


def test_an_undecorated_method_reads_as_before() -> None:
    span = _span("Money.plain")
    before = SOURCE[span.start_byte : span.end_byte].decode()
    assert definition_text(SOURCE, span) == before == "def plain(self, n):\n        return n + 1"
    assert mutants(before)
