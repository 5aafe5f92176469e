"""The standard-library parent's method an override may copy (read as source, not imported)."""

from __future__ import annotations

from replicate.batch.visible import stdlib_parents
from replicate.core.copying import CopyIndex, target_tokens
from replicate.core.records import Span, Target

COPIED = """
import string
from collections import UserDict


class Fields(string.Formatter):
    def get_field(self, field_name, args, kwargs):
        first, rest = _string.formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, i in rest:
            if is_attr:
                obj = getattr(obj, i)
            else:
                obj = obj[i]
        return obj, first


class Table(UserDict):
    def pop(self, key, default=None):
        try:
            value = self[key]
        except KeyError:
            return default
        else:
            del self[key]
            return value
"""

ORIGINAL = """
import string


class Fields(string.Formatter):
    def get_field(self, field_name, args, kwargs):
        head, _, tail = field_name.partition(".")
        value = kwargs[head] if head in kwargs else args[int(head)]
        return (getattr(value, tail) if tail else value), head
"""


def _method(source: str, cls: str, name: str) -> Target:
    lines = source.splitlines()
    start = next(
        i
        for i, text in enumerate(lines, 1)
        if text.strip().startswith(f"def {name}(") and cls in "".join(lines[:i])
    )
    span = Span(start_byte=0, end_byte=0, start_line=start, end_line=start + 1)
    return Target(
        path="pkg/mod.py",
        module="pkg.mod",
        qualname=f"{cls}.{name}",
        kind="method",
        signature=lines[start - 1],
        class_name=cls,
        def_span=span,
        body_span=span,
        body_indent="        ",
        body_statements=1,
    )


def _copy(source: str, cls: str, name: str) -> tuple[float, str | None]:
    target = _method(source, cls, name)
    tokens = target_tokens(
        source, name, range(target.def_span.start_line, target.def_span.end_line)
    )
    found = CopyIndex(stdlib_parents(source.encode(), target)).best(tokens)
    return found.ratio, found.of


def test_an_override_that_copies_its_stdlib_parent_scores_high() -> None:
    ratio, of = _copy(COPIED, "Fields", "get_field")
    assert ratio >= 0.9
    assert of is not None and "string.py" in of and "Formatter.get_field" in of


def test_the_parent_is_found_up_the_stdlib_bases() -> None:
    # UserDict has no pop of its own: MutableMapping's (its base, in _collections_abc) is found
    ratio, of = _copy(COPIED, "Table", "pop")
    assert of is not None and "MutableMapping.pop" in of
    assert ratio >= 0.6


def test_an_original_override_scores_low() -> None:  # the positive control of the tests above
    ratio, _ = _copy(ORIGINAL, "Fields", "get_field")
    assert ratio < 0.3


def test_a_function_has_no_parent() -> None:
    target = _method(ORIGINAL, "Fields", "get_field").model_copy(
        update={"class_name": None, "kind": "function", "qualname": "get_field"}
    )
    assert stdlib_parents(ORIGINAL.encode(), target) == []


REEXPORTED = """
from collections.abc import MutableSequence


class Items(MutableSequence):
    def index(self, value, start=0, stop=None):
        if start is not None and start < 0:
            start = max(len(self) + start, 0)
        if stop is not None and stop < 0:
            stop += len(self)
        i = start
        while stop is None or i < stop:
            try:
                v = self[i]
            except IndexError:
                break
            if v is value or v == value:
                return i
            i += 1
        raise ValueError
"""


def test_a_parent_the_stdlib_re_exports_is_followed_to_its_source() -> None:
    # collections.abc holds no class: `from _collections_abc import *`; index is Sequence's
    ratio, of = _copy(REEXPORTED, "Items", "index")
    assert of is not None and "_collections_abc.py" in of and "Sequence.index" in of
    assert ratio >= 0.9
