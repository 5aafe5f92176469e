from __future__ import annotations

import ast
import textwrap

from replicate.core.records import Target
from replicate.languages.python_extract import extract_targets, first_error_line, parse_tree


def _targets(source: str) -> dict[str, Target]:
    data = textwrap.dedent(source).encode("utf-8")
    found = extract_targets(data, parse_tree(data), "pkg/mod.py", "pkg.mod")
    return {target.qualname: target for target in found}


def _text(source: str, start: int, end: int) -> str:
    return textwrap.dedent(source).encode("utf-8")[start:end].decode("utf-8")


FUNCTIONS = '''\
"""Module docstring."""
import functools


def plain(a, b=1):
    """Add things.

    Details:
        Indented line.
    """
    c = a + b
    return c


@functools.lru_cache(maxsize=None)
def cached(
    x: int,
    y: int = 2,
) -> int:
    return x * y


async def fetch(url):
    return await get(url)


def gen(n):
    for i in range(n):
        yield i


async def agen():
    yield from_nothing


def outer():
    def inner():
        yield 1

    f = lambda: (yield)
    return inner


def inline(x): return x + 1


def only_doc():
    """Nothing here."""


def placeholder():
    """Doc."""
    ...


def not_impl(x):
    raise NotImplementedError("later")


def passes():
    pass
'''


def test_module_functions_and_their_fields() -> None:
    found = _targets(FUNCTIONS)
    assert list(found) == ["plain", "cached", "fetch", "gen", "agen", "outer", "inline"]
    plain = found["plain"]
    assert plain.kind == "function"
    assert plain.path == "pkg/mod.py" and plain.module == "pkg.mod"
    assert plain.symbol == "pkg.mod.plain"
    assert plain.signature == "def plain(a, b=1):"
    assert plain.docstring == "Add things.\n\nDetails:\n    Indented line."
    assert plain.class_name is None
    assert plain.body_indent == "    "
    assert plain.body_statements == 2
    assert _text(FUNCTIONS, plain.body_span.start_byte, plain.body_span.end_byte) == (
        "c = a + b\n    return c"
    )
    assert (plain.def_span.start_line, plain.def_span.end_line) == (5, 12)
    assert (plain.body_span.start_line, plain.body_span.end_line) == (11, 12)


def test_decorated_multiline_header() -> None:
    cached = _targets(FUNCTIONS)["cached"]
    assert cached.decorators == ("functools.lru_cache(maxsize=None)",)
    assert cached.signature == (
        "@functools.lru_cache(maxsize=None)\ndef cached(\n    x: int,\n    y: int = 2,\n) -> int:"
    )
    assert _text(FUNCTIONS, cached.def_span.start_byte, cached.def_span.end_byte).startswith("@")
    assert cached.docstring is None
    assert cached.body_statements == 1


def test_async_generators_and_nesting() -> None:
    found = _targets(FUNCTIONS)
    assert (found["fetch"].is_async, found["fetch"].is_generator) == (True, False)
    assert (found["gen"].is_async, found["gen"].is_generator) == (False, True)
    assert (found["agen"].is_async, found["agen"].is_generator) == (True, True)
    # yields inside a nested def or lambda do not make the outer function a generator
    assert found["outer"].is_generator is False
    assert found["outer"].body_statements == 3
    assert "inner" not in found


def test_inline_body() -> None:
    inline = _targets(FUNCTIONS)["inline"]
    assert inline.body_indent == ""
    assert _text(FUNCTIONS, inline.body_span.start_byte, inline.body_span.end_byte) == (
        "return x + 1"
    )
    assert inline.signature == "def inline(x):"


CLASSES = """\
import abc
import typing
from typing import overload


class Shape(abc.ABC):
    \"\"\"A shape.\"\"\"

    sides = 0

    def __init__(self, size):
        self.size = size

    def __eq__(self, other):
        return self.size == other.size

    def __secret(self):
        return 1

    def area(self):
        '''Area.'''
        return self.size ** 2

    @classmethod
    def unit(cls):
        return cls(1)

    @staticmethod
    def describe(x):
        return str(x)

    @property
    def double(self):
        return self.size * 2

    @double.setter
    def double(self, value):
        self.size = value / 2

    @abc.abstractmethod
    def name(self):
        return "shape"

    @typing.overload
    def scale(self, k: int) -> int: ...
    @overload
    def scale(self, k: float) -> float: ...
    def scale(self, k):
        return self.size * k

    def twice(self):
        return 1

    def twice(self):
        return 2

    class Inner:
        def deep(self):
            return 3

    if True:
        def hidden(self):
            return 4
"""


def test_methods_and_their_kinds() -> None:
    found = _targets(CLASSES)
    assert sorted(found) == [
        "Shape.Inner.deep",
        "Shape.area",
        "Shape.describe",
        "Shape.scale",
        "Shape.unit",
    ]
    assert found["Shape.area"].kind == "method"
    assert found["Shape.area"].class_name == "Shape"
    assert found["Shape.area"].docstring == "Area."
    assert found["Shape.area"].body_indent == "        "
    assert found["Shape.unit"].kind == "classmethod"
    assert found["Shape.unit"].decorators == ("classmethod",)
    assert found["Shape.describe"].kind == "staticmethod"
    assert found["Shape.Inner.deep"].class_name == "Shape.Inner"
    assert found["Shape.Inner.deep"].body_indent == " " * 12
    assert found["Shape.scale"].signature == "def scale(self, k):"


MODULE_LEVEL_BLOCKS = """\
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    def typed_only(x):
        return x

    class TypedOnly:
        def meth(self):
            return 1

if sys.version_info >= (3, 8):
    def versioned(x):
        return x
else:
    def versioned(x):
        return -x

try:
    from _speedups import fast
except ImportError:
    def fast(x):
        return x * 2

try:
    import json
except ImportError:
    def unique_fallback(x):
        return x

def wrapped(x):
    return x

wrapped = staticmethod(wrapped)

def redefined():
    return 1

def redefined():
    return 2

if __name__ == "__main__":
    def main_only():
        return 0

with open_ctx():
    def in_with(x):
        return x

def __getattr__(name):
    return name

for _i in range(2):
    def looped():
        return 1
"""


def test_module_level_blocks_and_duplicate_names() -> None:
    assert sorted(_targets(MODULE_LEVEL_BLOCKS)) == ["in_with", "unique_fallback"]


def test_non_ascii_offsets_are_bytes() -> None:
    source = 'GREETING = "héllo wörld ✓"\n\n\ndef f(s="ü"):\n    """Ünïcode."""\n    return s * 2\n'
    target = _targets(source)["f"]
    data = source.encode("utf-8")
    assert data[target.body_span.start_byte : target.body_span.end_byte] == b"return s * 2"
    assert data[target.def_span.start_byte :].startswith(b"def f(")
    assert target.def_span.start_byte == source.index("def f(") + 4  # é, ö: +1 each; ✓: +2
    assert target.docstring == "Ünïcode."
    assert target.body_span.start_line == 6


def test_docstring_edge_cases() -> None:
    source = '''\
def fdoc(x):
    f"""not a docstring {x}"""
    return x

def joined():
    "a" "b"
    return 1

def semi(): "doc"; return 2

def escapes():
    """Match \\d+ here."""
    return 3
'''
    found = _targets(source)
    assert found["fdoc"].docstring is None
    assert found["fdoc"].body_statements == 2
    assert found["joined"].docstring == "ab"
    assert found["semi"].docstring == "doc"
    assert found["semi"].body_indent == ""
    assert found["escapes"].docstring == "Match \\d+ here."
    data = source.encode()
    span = found["semi"].body_span
    assert data[span.start_byte : span.end_byte] == b"return 2"


def test_spans_cover_exactly_what_ast_sees() -> None:
    source = textwrap.dedent(FUNCTIONS) + textwrap.dedent(CLASSES)
    data = source.encode()
    found = extract_targets(data, parse_tree(data), "m.py", "m")
    by_first_line = {
        min([node.lineno, *(deco.lineno for deco in node.decorator_list)]): node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    assert len(found) == 12
    for target in found:
        node = by_first_line[target.def_span.start_line]
        assert node.name == target.name
        assert target.def_span.end_line == node.end_lineno
        body = node.body[1:] if target.docstring is not None else node.body
        assert target.body_span.start_line == body[0].lineno
        assert target.body_statements == len(body)
        assert target.is_async == isinstance(node, ast.AsyncFunctionDef)


def test_first_error_line() -> None:
    good = b"def f():\n    return 1\n"
    bad = b"def f():\n    return 1\n\ndef g(:\n    pass\n"
    assert first_error_line(parse_tree(good)) is None
    assert first_error_line(parse_tree(bad)) == 4


def test_trailing_comments_are_not_part_of_the_body() -> None:
    source = '''\
def f(x):
    if x:
        return 1
        # inner comment
# comment at column 0

def g(x):
    for i in x:
        pass
    else:
        return """a
b"""  # c
    # trailing
'''
    found = _targets(source)
    data = source.encode()
    f_span, g_span = found["f"].body_span, found["g"].body_span
    assert data[f_span.start_byte : f_span.end_byte] == b"if x:\n        return 1"
    assert found["f"].def_span.end_line == 3
    assert data[g_span.start_byte : g_span.end_byte].endswith(b'return """a\nb"""')
    assert (g_span.start_line, g_span.end_line) == (8, 12)
