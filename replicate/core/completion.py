"""What a model answered, read out of the text a trainer hands over (pure, standard library only).

Trainers decode a sample in different ways: verl and TRL give the response alone (special tokens
mostly skipped), OpenRLHF gives prompt + response decoded with every special token kept (the
prompt perhaps cut from the front), inspect gives the final reply. `response_of_query` finds the
response in a query; `read_response` takes off what is not the model's answer (chat markers,
end-of-sequence markers, thinking sections) and finds its fenced blocks. Which block holds the
code is the language adapter's choice (it knows what defines the target).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A turn ends at one of these (or where another turn opens); a marker inside a fenced block
# that is closed after it is the code's own text.
END_MARKERS = (
    "<|im_end|>",  # ChatML (Qwen, many fine-tunes)
    "<|eot_id|>",  # Llama 3
    "<|eom_id|>",  # Llama 3 (tool call)
    "<|end_of_text|>",  # Llama 3
    "<|endoftext|>",  # GPT-2 family, Qwen's padding
    "<|end|>",  # Phi-3
    "<end_of_turn>",  # Gemma
    "<eos>",  # Gemma
    "</s>",  # Llama 2, Mistral
    "<\uff5cend\u2581of\u2581sentence\uff5c>",  # DeepSeek
)
TURN_OPENERS = (
    "<|im_start|>",
    "<|start_header_id|>",
    "<start_of_turn>",
    "[INST]",
    "<|user|>",
    "<\uff5cUser\uff5c>",
)
# Taken off the front of a response: sequence starts and the assistant's turn header.
_LEADING = re.compile(
    r"\s*(?:<s>|<\uff5cbegin\u2581of\u2581sentence\uff5c>|<\|begin_of_text\|>|<bos>"
    r"|<\|im_start\|>assistant[^\n]*\n?"
    r"|<\|start_header_id\|>assistant<\|end_header_id\|>|<start_of_turn>model"
    r"|\[/INST\]|<\|assistant\|>|<\uff5cAssistant\uff5c>)\n*"
)
# The last of these in a query is where the model's turn begins.
_ASSISTANT = re.compile(
    r"<\|im_start\|>assistant[^\n]*\n?|<\|start_header_id\|>assistant<\|end_header_id\|>\s*"
    r"|<start_of_turn>model\n?|\[/INST\]|<\|assistant\|>\n?|<\uff5cAssistant\uff5c>"
)
_STOP = re.compile("|".join(re.escape(m) for m in (*END_MARKERS, *TURN_OPENERS)))
_THINK_OPEN = re.compile(r"<(think|thinking)>")
_THINK_CLOSE = re.compile(r"</(think|thinking)>")
_THINK_PAIR = re.compile(r"<(think|thinking)>.*?</\1>", re.DOTALL)
_FENCE_OPEN = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)")
# A prompt's tail this long (or the whole prompt) found in a query marks where the response starts.
MIN_PROMPT_TAIL = 32


@dataclass(frozen=True)
class FencedBlock:
    """One markdown fenced block: its info tag (lower case), its content, and whether a closing
    fence ended it (an unterminated one runs to the end of the text)."""

    tag: str
    code: str
    closed: bool
    start: int  # offsets of the content in the text it was found in
    end: int


@dataclass(frozen=True)
class Response:
    """The model's answer: `text` without chat markers or thinking, its fenced blocks, whether a
    thinking section was taken out, and the marker that ended the answer (None: the text did)."""

    text: str
    blocks: tuple[FencedBlock, ...]
    thought: bool
    ended_by: str | None


def fenced_blocks(text: str) -> tuple[FencedBlock, ...]:
    """The fenced blocks of a markdown text, in order (``` or ~~~, three or more)."""
    lines = text.splitlines(keepends=True)
    blocks: list[FencedBlock] = []
    index, offset = 0, 0
    while index < len(lines):
        match = _FENCE_OPEN.match(lines[index])
        offset += len(lines[index])
        index += 1
        if match is None:
            continue
        fence, tag = match.group(1), match.group(2).lower()
        start, content = offset, []
        while index < len(lines) and not _closes(lines[index], fence):
            content.append(lines[index])
            offset += len(lines[index])
            index += 1
        code, closed = "".join(content), index < len(lines)
        blocks.append(FencedBlock(tag, code, closed, start, start + len(code)))
        if closed:
            offset += len(lines[index])
            index += 1
    return tuple(blocks)


def _closes(line: str, fence: str) -> bool:
    """Whether `line` closes a block opened by `fence` (a marker may follow on its line)."""
    stripped = _STOP.split(line, maxsplit=1)[0].strip()
    return len(stripped) >= len(fence) and stripped == fence[0] * len(stripped)


def read_response(text: str) -> Response:
    """The answer in a model's response: the assistant's header and sequence starts taken off its
    front, thinking sections (`<think>...</think>`, or all before a lone `</think>` whose opening
    was in the prompt; an unclosed `<think>` runs to the end) taken out, and the text cut at the
    first end-of-turn marker or new turn that is not inside a closed fenced block."""
    text = text.replace("\r\n", "\n").removeprefix("\ufeff")
    while (lead := _LEADING.match(text)) is not None and lead.end() > 0:
        text = text[lead.end() :]
    text, thought = _without_thinking(text)
    text, ended_by = _cut_at_end(text)
    return Response(text, fenced_blocks(text), thought, ended_by)


def _without_thinking(text: str) -> tuple[str, bool]:
    kept = _THINK_PAIR.sub("", text)
    closes = list(_THINK_CLOSE.finditer(kept))
    if closes:
        kept = kept[closes[-1].end() :]
    opened = _THINK_OPEN.search(kept)
    if opened is not None:
        kept = kept[: opened.start()]
    return kept, kept != text


def _cut_at_end(text: str) -> tuple[str, str | None]:
    inside = [(b.start, b.end) for b in fenced_blocks(text) if b.closed]
    for found in _STOP.finditer(text):
        if not any(start <= found.start() < end for start, end in inside):
            return text[: found.start()], found.group()
    return text, None


def response_of_query(query: str, prompt: str) -> str:
    """The response in `query` = prompt + response (OpenRLHF's), also where the trainer cut the
    prompt from the front: after the longest tail of `prompt` found in the query (at least
    `MIN_PROMPT_TAIL` characters, or the whole prompt), else after the last assistant turn
    header, else the whole query."""
    if prompt and query.startswith(prompt):
        return query[len(prompt) :]
    tail = _longest_tail(query, prompt)
    if tail >= min(len(prompt), MIN_PROMPT_TAIL) and tail > 0:
        return query[query.find(prompt[-tail:]) + tail :]
    headers = list(_ASSISTANT.finditer(query))
    return query[headers[-1].end() :] if headers else query


def _longest_tail(query: str, prompt: str) -> int:
    """The length of the longest tail of `prompt` found in `query` (a tail found means every
    shorter one is found too, so it is searched by halving)."""
    low, high = 0, len(prompt)
    while low < high:
        middle = (low + high + 1) // 2
        if prompt[-middle:] in query:
            low = middle
        else:
            high = middle - 1
    return low
