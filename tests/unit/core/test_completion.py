"""`core.completion`: the answer read out of a model's text, and the response out of a query."""

from __future__ import annotations

import pytest

from replicate.core import fenced_blocks, read_response, response_of_query

CODE = "def f(x):\n    return x + 1\n"
FENCED = f"```python\n{CODE}```"


@pytest.mark.parametrize(
    ("text", "answer", "ended_by"),
    [
        (f"{FENCED}<|im_end|>", FENCED, "<|im_end|>"),
        (f"{FENCED}\n<|im_end|>\n<|endoftext|><|endoftext|>", f"{FENCED}\n", "<|im_end|>"),
        (f"{FENCED}<|eot_id|>", FENCED, "<|eot_id|>"),
        (
            f"<|start_header_id|>assistant<|end_header_id|>\n\n{FENCED}<|eot_id|>",
            FENCED,
            "<|eot_id|>",
        ),
        (f"<start_of_turn>model\n{FENCED}<end_of_turn>\n<eos>", FENCED, "<end_of_turn>"),
        (f"<s>{FENCED}</s>", FENCED, "</s>"),
        (f"{CODE}<|endoftext|>", CODE, "<|endoftext|>"),
        (
            f"<|im_start|>assistant\n{FENCED}<|im_end|>\n<|im_start|>user\nmore",
            FENCED,
            "<|im_end|>",
        ),
        (f"{FENCED}\n[INST] again [/INST]", f"{FENCED}\n", "[INST]"),
        (CODE, CODE, None),
    ],
)
def test_markers_around_and_after_the_answer_are_taken_off(
    text: str, answer: str, ended_by: str | None
) -> None:
    read = read_response(text)
    assert (read.text, read.ended_by) == (answer, ended_by)


def test_a_marker_inside_a_closed_fence_is_the_codes_own_text() -> None:
    code = 'def f():\n    return "</s><|endoftext|>"\n'
    read = read_response(f"```python\n{code}```</s>")
    assert read.text == f"```python\n{code}```" and read.ended_by == "</s>"
    # an unterminated fence: the marker after the code ends it
    assert read_response(f"```python\n{CODE}<|im_end|>").text == f"```python\n{CODE}"


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        (f"<think>try ```python\ndef f(): pass\n```</think>\n{FENCED}", f"\n{FENCED}"),
        (f"I should add one.\n</think>\n\n{FENCED}<|im_end|>", f"\n\n{FENCED}"),
        (f"<thinking>a</thinking>{FENCED}<think>b</think>", FENCED),
        (f"<think>still thinking {FENCED}", ""),  # never closed: no answer
    ],
)
def test_thinking_is_not_the_answer(text: str, answer: str) -> None:
    read = read_response(text)
    assert read.text == answer and read.thought


def test_fenced_blocks_in_order_with_tags_and_ends() -> None:
    text = f"a\n```py\n{CODE}```\nb\n~~~\nx = 1\n~~~\n````Python3\ny = 2\n"
    blocks = fenced_blocks(text)
    assert [(b.tag, b.code, b.closed) for b in blocks] == [
        ("py", CODE, True),
        ("", "x = 1\n", True),
        ("python3", "y = 2\n", False),
    ]
    assert all(text[b.start : b.end] == b.code for b in blocks)


PROMPT = (
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\n"
    + "Implement `f` so that it behaves like the original. " * 20
    + "<|im_end|>\n<|im_start|>assistant\n"
)


@pytest.mark.parametrize(
    "query",
    [
        PROMPT + FENCED,  # the prompt whole
        PROMPT[400:] + FENCED,  # cut from the front
        "\ufffd" + PROMPT[401:] + FENCED,  # cut inside a character: the first token decodes badly
        "<|im_start|>assistant\n" + FENCED,  # nothing of the prompt's text but its last header
    ],
)
def test_the_response_is_found_in_a_query(query: str) -> None:
    assert response_of_query(query, PROMPT) == FENCED


def test_a_query_without_the_prompt_or_a_header_is_all_response() -> None:
    assert response_of_query(FENCED, "an unrelated prompt " * 10) == FENCED
    assert response_of_query("[INST] do it [/INST]" + FENCED, "zz") == FENCED
