"""`python_answer.extract_code`: the code of a model's answer for one target."""

from __future__ import annotations

import textwrap

import pytest

from replicate.core import SpliceError
from replicate.core.records import Target
from replicate.languages import python_answer
from replicate.languages.python_answer import CodeFrom, extract_code
from replicate.languages.python_extract import extract_targets, parse_tree

SOURCE = textwrap.dedent(
    """\
    def clamp(x):
        return min(x, 10)


    class Box:
        def area(self):
            return self.w * self.h
    """
).encode()
RIGHT = "def clamp(x):\n    return min(x, 10)\n"


def _target(qualname: str) -> Target:
    found = extract_targets(SOURCE, parse_tree(SOURCE), "pkg/mod.py", "pkg.mod")
    return next(target for target in found if target.qualname == qualname)


def fenced(code: str, tag: str = "python") -> str:
    return f"```{tag}\n{code.rstrip()}\n```"


@pytest.mark.parametrize(
    ("text", "found_in"),
    [
        (RIGHT, CodeFrom.TEXT),
        (fenced(RIGHT) + "<|im_end|>", CodeFrom.BLOCK),
        # the block that defines the target wins over a usage example, wherever it is
        (f"{fenced('print(clamp(3))')}\nthen\n{fenced(RIGHT, '')}", CodeFrom.BLOCK),
        (f"{fenced(RIGHT)}\nUsage:\n{fenced('print(clamp(3))')}<|eot_id|>", CodeFrom.BLOCK),
        (RIGHT + "<|endoftext|>", CodeFrom.ANSWER),
        (f"Sure. Here it is:\n\n{RIGHT}\nIt caps at ten.<end_of_turn>", CodeFrom.PROSE),
        (f"<think>\n{fenced('def clamp(:')}\n</think>\n{fenced(RIGHT)}", CodeFrom.BLOCK),
    ],
)
def test_the_code_is_found(text: str, found_in: CodeFrom) -> None:
    code = extract_code(text, _target("clamp"))
    assert code.found_in is found_in
    assert "return min(x, 10)" in code.text and "<|" not in code.text


def test_of_two_defining_blocks_the_last_wins() -> None:
    draft = "def clamp(x):\n    return x\n"
    code = extract_code(f"Draft:\n{fenced(draft)}\nFixed:\n{fenced(RIGHT)}", _target("clamp"))
    assert code.text == RIGHT


def test_a_method_in_a_block_with_its_class_or_bare() -> None:
    method = "def area(self):\n    return self.w * self.h\n"
    klass = "class Box:\n    " + method.replace("\n    ", "\n        ")
    for text in (fenced(method), fenced(klass), f"I wrote:\n\n{method}\nDone."):
        assert "self.w * self.h" in extract_code(text + "</s>", _target("Box.area")).text


def test_a_source_file_with_a_syntax_error_still_does_not_parse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The prose rule is for replies: a file broken elsewhere is not cut down to the target
    (without the check that the text reads as a reply, it would be)."""
    broken = f'"""A module."""\n\nimport os\n\n{RIGHT}\n\nif __name__ == "__main__" clamp(1)\n'
    with pytest.raises(SpliceError, match="does not parse"):
        extract_code(broken, _target("clamp"))
    with monkeypatch.context() as patched:
        patched.setattr(python_answer, "_is_prose", lambda text: True)
        assert extract_code(broken, _target("clamp")).found_in is CodeFrom.PROSE


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (f"<think>\n{fenced(RIGHT)}", "no answer outside its thinking"),
        ("<|im_end|>", "no answer before <|im_end|>"),
        (fenced("def clamp(:"), "does not parse"),
    ],
)
def test_no_code_says_why(text: str, reason: str) -> None:
    with pytest.raises(SpliceError, match=reason):
        extract_code(text, _target("clamp"))
