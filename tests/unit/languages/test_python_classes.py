"""Class targets (task kind `class`): every method of one class hidden at once, byte-exact stub,
and a whole-class candidate spliced back."""

from __future__ import annotations

from typing import Any

import pytest

from replicate.core import SpliceError, Target, TaskKind
from replicate.languages.python_classes import extract_classes
from replicate.languages.python_extract import parse_tree
from replicate.languages.python_splice import STUB_BODY, splice, stub_source
from replicate.languages.python_tokens import candidate_tokens, original_tokens

SOURCE = b'''\
"""A module."""
import functools

LIMIT = 3


def helper(x):
    return x + 1


@functools.total_ordering
class Box(object):
    """A box of items, at most LIMIT."""

    kind = "box"

    class Inner:
        def ping(self):
            return "pong"

    def __init__(self, items=()):
        """Make a box."""
        self.items = list(items)[:LIMIT]

    def __len__(self):
        return len(self.items)

    def __eq__(self, other):
        return self.items == other.items

    def __lt__(self, other):
        return len(self) < len(other)

    @property
    def first(self):
        return self.items[0]

    @first.setter
    def first(self, value):
        self.items[0] = value

    @classmethod
    def of(cls, *items):
        return cls(items)

    @staticmethod
    def double(x):
        return helper(x) * 2

    def add(self, item):
        """Add one item."""
        if len(self.items) >= LIMIT:
            raise ValueError("full")
        self.items.append(item)
        return self

    def todo(self):
        raise NotImplementedError


class Empty(Exception):
    """No methods with code."""

    def nothing(self):
        pass
'''

CANDIDATE = """\
class Box:
    def __init__(self, items=()): self.items = list(items)[:3]
    def __len__(self): return len(self.items)
    def __eq__(self, other): return self.items == other.items
    def __lt__(self, other): return len(self.items) < len(other.items)
    first = property(lambda self: self.items[0])
    of = classmethod(lambda cls, *items: cls(items))
    double = staticmethod(lambda x: (x + 1) * 2)
    def add(self, item):
        if len(self.items) >= 3:
            raise ValueError("full")
        self.items.append(item)
        return self
"""


def _classes(data: bytes = SOURCE) -> list[Target]:
    return extract_classes(data, parse_tree(data), "pkg/box.py", "pkg.box")


def _box() -> Target:
    return next(t for t in _classes() if t.qualname == "Box")


def _run(data: bytes) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "spliced"}
    exec(compile(data, "pkg/box.py", "exec"), namespace)
    return namespace


def test_a_class_target_names_every_method_with_code_and_keeps_the_rest() -> None:
    found = {t.qualname: t for t in _classes()}
    assert set(found) == {"Box", "Box.Inner"}  # Empty defines no method with code
    box = found["Box"]
    assert box.kind == "class" and box.task_kind is TaskKind.CLASS
    assert box.symbol == "pkg.box.Box" and box.class_name is None
    assert found["Box.Inner"].class_name == "Box"
    assert [m.name for m in box.members] == [
        "__init__",
        "__len__",
        "__eq__",
        "__lt__",
        "first",
        "first",
        "of",
        "double",
        "add",
    ]
    assert [m.kind for m in box.members if m.name in {"of", "double", "add"}] == [
        "classmethod",
        "staticmethod",
        "method",
    ]
    assert box.signature == "@functools.total_ordering\nclass Box(object):"
    assert box.docstring == "A box of items, at most LIMIT."
    assert box.decorators == ("functools.total_ordering",)
    assert box.body_statements == sum(m.body_statements for m in box.members)
    text = SOURCE[box.def_span.start_byte : box.def_span.end_byte]
    assert text.startswith(b"@functools.total_ordering")
    assert text.endswith(b"raise NotImplementedError")


def test_the_stub_replaces_exactly_each_member_body() -> None:
    box = _box()
    stubbed = stub_source(SOURCE, box)
    assert stubbed.count(STUB_BODY) == len(box.members) + 1  # `todo` was a stub already
    for member in box.members:  # every signature and docstring stays
        assert member.signature.encode() in stubbed
        if member.docstring:
            assert member.docstring.encode() in stubbed
    for kept in (b'kind = "box"', b'return "pong"', b"def helper(x):\n    return x + 1"):
        assert kept in stubbed
    assert b"self.items.append(item)" not in stubbed
    namespace = _run(stubbed)
    with pytest.raises(NotImplementedError):
        namespace["Box"]([1])
    assert namespace["Box"].kind == "box" and namespace["Box"].Inner().ping() == "pong"


def test_splicing_the_original_class_gives_back_the_original_file() -> None:
    box = _box()
    stubbed = stub_source(SOURCE, box)
    original = SOURCE[box.def_span.start_byte : box.def_span.end_byte].decode()
    assert splice(stubbed, original, box) == SOURCE
    assert splice(stubbed, SOURCE.decode(), box) == SOURCE  # the whole file


def test_a_whole_class_candidate_replaces_the_class_and_keeps_its_decorators() -> None:
    box = _box()
    stubbed = stub_source(SOURCE, box)
    spliced = splice(stubbed, f"```python\n{CANDIDATE}```", box)
    assert spliced.startswith(SOURCE[: box.def_span.start_byte])
    assert spliced.endswith(SOURCE[box.def_span.end_byte :])
    namespace = _run(spliced)
    made = namespace["Box"].of(1, 2)
    assert made.add(5) is made and len(made) == 3 and made.first == 1
    assert namespace["Box"]([1]) <= made  # total_ordering, the stubbed file's decorator, kept
    assert namespace["Box"].double(2) == 6
    tokens = candidate_tokens(spliced, stubbed, box)
    assert tokens is not None and ("NAME", "append") in [(k.name, t) for k, t in tokens]
    original = original_tokens(SOURCE, box)
    assert original is not None and ("NAME", "append") in [(k.name, t) for k, t in original]
    # a class's body tokens are its methods' bodies: the stub's are only its raises
    stub_tokens = candidate_tokens(stubbed, stubbed, box) or ()
    assert {t for _, t in stub_tokens} == {"raise", "NotImplementedError"}


def test_a_candidate_without_the_class_is_refused() -> None:
    box = _box()
    with pytest.raises(SpliceError, match="no definition of Box"):
        splice(stub_source(SOURCE, box), "def add(self, item):\n    return self\n", box)


def test_ids_and_kinds_read_back_for_batches_minted_before_kinds() -> None:
    from replicate.core import task_id

    assert TaskKind.of("function") is TaskKind.FUNCTION
    assert {TaskKind.of(k) for k in ("method", "classmethod", "staticmethod")} == {TaskKind.METHOD}
    before = task_id("github.com/a/box", "c" * 40, "pkg.box.Box.add")
    assert before == task_id("github.com/a/box", "c" * 40, "pkg.box.Box.add", "")
    ident = task_id("github.com/a/box", "c" * 40, "pkg.box.Box", TaskKind.CLASS)
    assert ident.startswith("box__class.pkg.box.Box__")
    assert ident != task_id("github.com/a/box", "c" * 40, "pkg.box.Box")
