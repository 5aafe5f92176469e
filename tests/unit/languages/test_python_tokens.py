"""The Python adapter finds the target's body in a spliced candidate file (read where the stub
was, else by parsing the whole file) and in the original (where its span says)."""

from __future__ import annotations

import pytest

import replicate.languages.python_tokens as python_tokens
from replicate.core import Target
from replicate.languages.python import PythonLanguage
from replicate.languages.python_extract import extract_targets, parse_tree

SOURCE = b'''"""A module."""
import os


class Box:
    """Holds items."""

    @staticmethod
    def pack(items, size):
        """Pack items into boxes."""
        out = []
        for start in range(0, len(items), size):
            out.append(items[start : start + size])
        return out

    def other(self):
        return os.sep


def after():
    return 1
'''
BODY = """out = []
for start in range(0, len(items), size):
    out.append(items[start:start + size])
return out"""


@pytest.fixture
def target() -> Target:
    found = extract_targets(SOURCE, parse_tree(SOURCE), "pkg/box.py", "pkg.box")
    return next(one for one in found if one.qualname == "Box.pack")


def _texts(found: object) -> list[str]:
    assert isinstance(found, tuple)
    return [text for _, text in found]


def test_the_original_and_each_splice_give_the_same_body(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_parse(*args: object) -> None:
        raise AssertionError("a splice's body is read where the stub was, without a parse")

    monkeypatch.setattr(python_tokens, "find_candidate_def", no_parse)
    language = PythonLanguage()
    stubbed = language.stub(SOURCE, target)
    original = language.body_tokens(SOURCE, target)
    assert _texts(original)[:3] == ["out", "=", "["]
    completion = "import math\n\ndef pack(items, size):\n" + "\n".join(
        "    " + line for line in BODY.split("\n")
    )
    for candidate in (SOURCE.decode(), completion):  # a whole file; a def with a new import
        spliced = language.splice(stubbed, candidate, target)
        assert language.body_tokens(spliced, target, stubbed) == original
    stub = language.body_tokens(stubbed, target, stubbed)
    assert _texts(stub) == ["raise", "NotImplementedError"]


def test_where_the_file_changed_after_the_target_the_whole_file_is_parsed(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    language = PythonLanguage()
    stubbed = language.stub(SOURCE, target)
    changed = SOURCE.decode().replace("return 1", "return 2")  # a whole file, edited elsewhere
    spliced = language.splice(stubbed, changed, target)
    called: list[bool] = []
    reading = python_tokens._after_stub

    def spy(*args: object, **kwargs: object) -> object:
        found = reading(*args, **kwargs)  # type: ignore[arg-type]
        called.append(found is None)
        return found

    monkeypatch.setattr(python_tokens, "_after_stub", spy)
    assert language.body_tokens(spliced, target, stubbed) == language.body_tokens(SOURCE, target)
    assert called == [True]  # the fast read gave up, the parse found it


def test_a_file_without_the_target_has_no_body(target: Target) -> None:
    language = PythonLanguage()
    stubbed = language.stub(SOURCE, target)
    assert language.body_tokens(b"def unrelated():\n    return 0\n", target, stubbed) is None
    assert language.body_tokens(b"def broken(:\n", target, stubbed) is None
