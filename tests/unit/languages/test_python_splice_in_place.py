"""A candidate that is the stubbed file with only the target's definition edited is taken as the
whole file without parsing it (`python_splice._edited_in_place`): it must splice exactly as the
parse-based rule would, whatever the edited lines hold."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replicate.core.records import Target
from replicate.languages import python_splice
from replicate.languages.python_extract import extract_targets, parse_tree
from replicate.languages.python_splice import SpliceError, splice, stub_source
from replicate.languages.python_splice_text import edited_region

MODULE = textwrap.dedent(
    '''\
    """Docstring."""
    import os

    LIMIT = 3

    if os.sep:
        def clamp(x):
            return min(x, LIMIT)
    else:
        def clamp(x):
            return x


    class Box:
        size = 1

        @staticmethod
        def grow(by):
            return by + 1

        def label(self):
            return "box"


    def tail():
        return os.sep
    '''
).encode()

# lines an agent's edit may leave in the target's place: right ones, and ones that open or close
# something, dedent past the block, or bind names at another level
SNIPPETS = [
    "{i}def {name}(*args):",
    "{i}def {name}(x):",
    "{i}    return 1",
    "{i}    return (",
    "{i}    )",
    "{i}    s = '''",
    "{i}'''",
    "'''",
    "{i}    x = 1 + \\",
    "{i}    pass",
    "{i}@staticmethod",
    "{i}else:",
    "{i}if x:",
    "{i}    LIMIT = 4",
    "{i}LIMIT = 5",
    "os = None",
    "def tail(): pass",
    "class Box: pass",
    "# a comment at column 0",
    "",
    "   ",
    "{i}\tpass",
    "{i}  return 2",
    "{i}import sys",
    "{i}'''unclosed",
    "{i}#",
]


def _target(source: bytes, qualname: str) -> Target:
    found = extract_targets(source, parse_tree(source), "pkg/mod.py", "pkg.mod")
    return next(target for target in found if target.qualname == qualname)


def _both(stubbed: bytes, text: str, target: Target) -> tuple[object, object, bool]:
    """The splice with the shortcut and without it (bytes, or the error's type), and whether the
    shortcut was taken."""
    taken: list[bool] = []
    real = python_splice._edited_in_place

    def watched(*args: object) -> bool:
        taken.append(real(*args))  # type: ignore[arg-type]
        return taken[-1]

    def outcome() -> object:
        try:
            return splice(stubbed, text, target, check=False)
        except SpliceError:
            return SpliceError

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(python_splice, "_edited_in_place", watched)
        fast = outcome()
        patch.setattr(python_splice, "_edited_in_place", lambda *args: False)
        slow = outcome()
    return fast, slow, any(taken)


def _cases() -> Iterator[tuple[bytes, Target, str, str]]:
    """Per target: the stubbed file, and its lines before and after the target's definition."""
    total = len(MODULE.decode().split("\n"))
    for qualname in ("tail", "Box.grow", "Box.label"):
        target = _target(MODULE, qualname)
        stubbed = stub_source(MODULE, target)
        lines = stubbed.decode().split("\n")
        after = len(lines) - (total - target.def_span.end_line)
        before = "\n".join(lines[: target.def_span.start_line - 1])
        yield stubbed, target, before, "\n".join(lines[after:])


CASES = list(_cases())


@settings(max_examples=300, deadline=None)
@given(
    case=st.sampled_from(CASES),
    picks=st.lists(st.sampled_from(SNIPPETS), max_size=6),
)
def test_an_edit_in_place_splices_as_the_parse_would(
    case: tuple[bytes, Target, str, str], picks: list[str]
) -> None:
    stubbed, target, before, after = case
    indent = "    " if target.class_name else ""
    region = [line.format(i=indent, name=target.name) for line in picks]
    text = "\n".join([before, *region, after])
    fast, slow, _ = _both(stubbed, text, target)
    assert fast == slow


def test_the_shortcut_is_taken_for_a_right_edit_and_not_for_a_file_changed_elsewhere() -> None:
    # positive control for the test above: an edit of the target alone takes the shortcut (so
    # the comparison is not of the slow path with itself); one that also changes another line,
    # or dedents out of the class, does not
    stubbed, target, before, after = CASES[1]  # Box.grow
    edit = ["    @staticmethod", "    def grow(by):", "        return by"]
    right = "\n".join([before, *edit, after])
    fast, slow, taken = _both(stubbed, right, target)
    assert taken and fast == slow and isinstance(fast, bytes)
    elsewhere = right.replace("LIMIT = 3", "LIMIT = 4")
    assert not _both(stubbed, elsewhere, target)[2]
    dedented = "\n".join([before, "def grow(by):", "    return by", after])
    assert not _both(stubbed, dedented, target)[2]


def test_edited_region_takes_the_indentation_off_and_refuses_tabs() -> None:
    original = "a = 1\nclass K:\n    def f(self):\n        raise X\nb = 2"
    edited = "a = 1\nclass K:\n    def f(self):\n\n        return 1\nb = 2"
    assert edited_region(edited, original, 3, 4) == "def f(self):\n\n    return 1"
    assert edited_region(edited.replace("a = 1", "a = 2"), original, 3, 4) is None
    assert edited_region(edited.replace("b = 2", "b = 3"), original, 3, 4) is None
    assert edited_region(edited.replace("        return", "\treturn"), original, 3, 4) is None
    assert edited_region("a = 1\nclass K:\nb = 2", original, 3, 4) == ""
