"""Completions as trainers decode them: chat templates with their special tokens, and the query
OpenRLHF sends (prompt + response decoded with special tokens kept, the prompt maybe cut)."""

from __future__ import annotations

import textwrap

from replicate.batch import LoadedTask
from replicate.core.prompt import Context
from replicate.exporters.plan import row_prompt
from replicate.grading.grader import original_source


def definition(task: LoadedTask) -> str:
    """The original definition of the target, dedented (a method as a bare def)."""
    span = task.hidden.target.def_span
    lines = original_source(task).decode().split("\n")[span.start_line - 1 : span.end_line]
    return textwrap.dedent("\n".join(lines)) + "\n"


# How a chat template wraps the prompt, and what follows the response (special tokens kept).
TEMPLATES: dict[str, tuple[str, str, str]] = {
    "chatml": (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n",
        "<|im_end|>\n<|im_start|>assistant\n",
        "<|im_end|>",
    ),
    "chatml_pad": (
        "<|im_start|>user\n",
        "<|im_end|>\n<|im_start|>assistant\n",
        "<|im_end|>\n<|endoftext|><|endoftext|><|endoftext|>",
    ),
    "llama3": (
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: "
        "December 2023<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n",
        "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
        "<|eot_id|>",
    ),
    "gemma": (
        "<bos><start_of_turn>user\n",
        "<end_of_turn>\n<start_of_turn>model\n",
        "<end_of_turn>\n<eos>",
    ),
    "mistral": ("<s>[INST] ", "[/INST]", "</s>"),
    "phi3": ("<|user|>\n", "<|end|>\n<|assistant|>\n", "<|end|><|endoftext|>"),
    "deepseek": (
        "<\uff5cbegin\u2581of\u2581sentence\uff5c><\uff5cUser\uff5c>",
        "<\uff5cAssistant\uff5c><think>\n",
        "<\uff5cend\u2581of\u2581sentence\uff5c>",
    ),
    "gpt2": ("", "\n\n", "<|endoftext|>"),
}


def openrlhf_query(template: str, task: LoadedTask, response: str, *, cut: bool) -> tuple[str, str]:
    """OpenRLHF's (query, prompt): the prompt through the chat template (what it sends as the
    prompt), the query the decoded prompt tokens (their front cut off when the prompt was too
    long: a cut falls between tokens, and the first kept one may be part of a character) and the
    response's, its end-of-turn tokens kept."""
    before, after, end = TEMPLATES[template]
    prompt = before + prompt_text(task) + after
    start = prompt.index("## The file") if cut else 0
    head = "\ufffd" + prompt[start + 1 :] if cut else prompt
    return head + response + end, prompt


def prompt_text(task: LoadedTask) -> str:
    """The row prompt `replicate export` writes for `task` by default (`--context signatures`)."""
    return row_prompt(task, Context.SIGNATURES, [task])
