"""The degenerate classes a class task is graded against, each family one statement per member."""

from __future__ import annotations

from types import SimpleNamespace
from unittest.mock import patch

from replicate.core import Target
from replicate.gen import class_families
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


def test_every_member_body_is_replaced_and_the_line_count_kept() -> None:
    box = _box()
    task = SimpleNamespace(hidden=SimpleNamespace(target=box))
    bodies = tuple(f"return {n}" for n in range(len(box.members)))
    with patch.object(class_families, "original_source", lambda _: SOURCE):
        made = class_families.with_bodies(task, bodies)  # type: ignore[arg-type]
    assert made.count(b"\n") == SOURCE.count(b"\n")
    assert made.decode().split("\n")[:4] == [
        "class Box:",
        "    def __init__(self, item=None):",
        "        return 0",
        "",
    ]
    assert made.decode().rstrip("\n").endswith("    def clear(self):\n        return 4")
    assert [line.strip() for line in made.decode().splitlines() if "return" in line] == [
        f"return {n}" for n in range(5)
    ]
