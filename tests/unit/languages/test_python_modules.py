"""Module targets (task kind `module`): every function and method body of one file stubbed at
once, byte for byte; a candidate is the whole file; the recall tokens of every member."""

from __future__ import annotations

import pytest

from replicate.core import SpliceError, Target, render_module_prompt
from replicate.core.prompt import Context, answer_sentence
from replicate.languages.python_classes import extract_classes
from replicate.languages.python_extract import extract_targets, parse_tree
from replicate.languages.python_modules import module_target, module_tokens, splice_module
from replicate.languages.python_splice import STUB_BODY, stub_source

SOURCE = b'''\
"""Shapes and their areas."""

import math

SIDES = {"square": 4}


def area(r):
    """Area of a circle of radius r."""
    return math.pi * r * r


class Square:
    """A square."""

    kind = "square"

    def __init__(self, side):
        self.side = side

    @property
    def area(self):
        """Its area."""
        return self.side ** 2

    def grow(self, by):
        self.side += by
        return self


def _placeholder():
    ...
'''


def _module() -> Target:
    tree = parse_tree(SOURCE)
    (square,) = extract_classes(SOURCE, tree, "shapes.py", "shapes")
    found = {
        m.body_span.start_byte: m for m in extract_targets(SOURCE, tree, "shapes.py", "shapes")
    }
    found.update((m.body_span.start_byte, m) for m in square.members)
    return module_target(SOURCE, "shapes.py", "shapes", list(found.values()))


def test_a_module_target_is_every_function_and_method_of_the_file() -> None:
    target = _module()
    assert target.kind == "module" and target.symbol == "shapes" and target.qualname == "shapes"
    assert [m.qualname for m in target.members] == [
        "area", "Square.__init__", "Square.area", "Square.grow",
    ]  # fmt: skip
    assert target.docstring == "Shapes and their areas."
    assert target.def_span.start_byte == 0 and target.def_span.end_byte == len(SOURCE)


def test_the_stub_replaces_exactly_every_member_body_and_nothing_else() -> None:
    target = _module()
    stubbed = stub_source(SOURCE, target)
    one_by_one = SOURCE
    for member in reversed(target.members):
        one_by_one = stub_source(one_by_one, member)
    assert stubbed == one_by_one
    assert stubbed.count(STUB_BODY) == len(target.members)
    compile(stubbed, "shapes.py", "exec")
    kept = [b"import math", b'SIDES = {"square": 4}', b'kind = "square"', b'"""Its area."""',
            b"@property", b"def grow(self, by):", b"def _placeholder():\n    ..."]  # fmt: skip
    assert all(text in stubbed for text in kept)
    assert b"math.pi" not in stubbed and b"self.side +=" not in stubbed
    # outside the body spans every byte is the original's
    cursor, parts = 0, []
    for member in target.members:
        parts.append(SOURCE[cursor : member.body_span.start_byte])
        cursor = member.body_span.end_byte
    parts.append(SOURCE[cursor:])
    assert stubbed == STUB_BODY.join(parts)


def test_members_must_not_overlap_and_must_exist() -> None:
    target = _module()
    with pytest.raises(ValueError, match="overlap"):
        module_target(SOURCE, "shapes.py", "shapes", (target.members[0], target.members[0]))
    with pytest.raises(ValueError, match="needs a member"):
        module_target(SOURCE, "shapes.py", "shapes", ())


def test_a_candidate_is_the_whole_file() -> None:
    target = _module()
    stubbed = stub_source(SOURCE, target)
    text = SOURCE.decode()
    assert splice_module(stubbed, text, target) == SOURCE
    fenced = f"Here it is:\n```python\n{text}```\n"
    assert splice_module(stubbed, fenced, target) == SOURCE
    assert splice_module(stubbed, stubbed.decode(), target) == stubbed
    bare = "def area(r):\n    return 3.0 * r * r\n"
    with pytest.raises(SpliceError, match="whole file; it lacks SIDES, Square, _placeholder, math"):
        splice_module(stubbed, bare, target)
    with pytest.raises(SpliceError, match="does not"):
        splice_module(stubbed, text + "\ndef broken(:\n", target)


def test_the_recall_tokens_are_every_members_body() -> None:
    target = _module()
    original = module_tokens(SOURCE, target)
    assert original and module_tokens(SOURCE, target, stub_source(SOURCE, target)) == original
    stubbed = stub_source(SOURCE, target)
    assert module_tokens(stubbed, target, stubbed) != original
    assert module_tokens(b"def (:", target, stubbed) is None


def test_task_md_lists_the_surface_and_the_graded_members() -> None:
    target = _module()
    text = render_module_prompt(target, (), 7, ("area", "Square.grow"))
    assert text.startswith("# Implement the module `shapes`")
    surface = ("def area(r):", "def __init__(self, side):", "def grow(self, by):")
    for line in (
        *surface,
        "Area of a circle of radius r.",
        "### In class `Square`",
        "### Functions",
    ):
        assert line in text
    assert "7 hidden calls of `area`, `Square.grow`" in text
    assert "Answer with the whole file" in text and "mean, over the functions" in text


def test_a_module_tasks_row_asks_for_the_whole_file() -> None:
    for context in Context:
        text = answer_sentence("shapes", context, "module")
        assert "whole module `shapes`" in text and "every line of the file" in text
