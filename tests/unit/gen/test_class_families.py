"""The degenerate classes a class task is graded against, each family one statement per member."""

from __future__ import annotations

from replicate.core import Target
from replicate.gen.class_families import (
    EVERY_FIRST,
    EVERY_NONE,
    EVERY_RAISE,
    EVERY_SELF,
    class_programs,
)
from replicate.languages.python_classes import extract_classes
from replicate.languages.python_extract import parse_tree

SOURCE = b"""\
class Box:
    def __init__(self, item=None):
        self.item = item

    def put(self, item, *, where=0):
        self.item = item

    @classmethod
    def of(klass, item):
        return klass(item)

    @staticmethod
    def size(box):
        return 1

    def clear(self):
        self.item = None
"""


def _box() -> Target:
    (found,) = extract_classes(SOURCE, parse_tree(SOURCE), "box.py", "box")
    return found


def test_each_family_gives_every_member_its_statement() -> None:
    programs = {p.name: p.bodies for p in class_programs(_box())}
    assert [m.name for m in _box().members] == ["__init__", "put", "of", "size", "clear"]
    assert programs[EVERY_NONE] == ("return None",) * 5
    assert programs[EVERY_RAISE] == ("raise ValueError",) * 5
    # a classmethod's receiver is its own first parameter; a staticmethod has none
    assert programs[EVERY_SELF] == (
        "return self",
        "return self",
        "return klass",
        "return None",
        "return self",
    )
    assert programs[EVERY_FIRST] == (
        "return item",
        "return item",
        "return item",
        "return box",
        "return None",
    )
