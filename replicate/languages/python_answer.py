"""The Python code in a model's answer for one target (pure, standard library only).

The one extraction every text path shares (`splice` calls it: `grade`, `run`'s candidates,
`builtin:openai-single`, the reward functions, `serve`, inspect's scorer):

1. a text that is Python as it stands is the code (a workspace's file, a bare definition);
2. else the answer is read (`core.read_response`: chat and end-of-sequence markers, thinking
   sections off); of its fenced blocks, the last one whose code defines the target wins;
3. with no fenced block, the answer itself, when it parses;
4. else, in an answer that opens or closes with a sentence, a definition of the target written
   among the prose, from its first line of code to the end of its indented block;
5. else a block that parses (the first python-tagged one, else the largest), for the splice to
   say what it lacks; a `SpliceError` saying why nothing parses otherwise.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from enum import StrEnum

from replicate.core import FencedBlock, Response, SpliceError, Target, read_response
from replicate.languages.python_splice_text import PYTHON_TAGS, dedent_code
from replicate.languages.python_splice_tree import find_candidate_def, parse_text

_CODE_START = re.compile(
    r"(?:@|(?:async\s+)?def\s|class\s|from\s+[\w.]+\s+import\s|import\s+[\w.]+\s*(?:as\s+\w+\s*)?$)"
)
_CODE_GOES_ON = re.compile(r"[\s#@)\]}]|(?:async\s+)?def\s|class\s|from\s|import\s|\w+\s*=")
_SENTENCE = re.compile(r"[A-Z][A-Za-z']*[ ,.:;!?]")


class CodeFrom(StrEnum):
    """Where the code of a candidate was found."""

    TEXT = "text"  # the text is Python as it stands
    BLOCK = "fenced block"  # a fenced block of the answer
    ANSWER = "answer"  # the answer without markers or thinking, unfenced
    PROSE = "definition in prose"  # the target's definition among prose


@dataclass(frozen=True)
class Code:
    """A candidate's code, its tree, and where in the text it was found."""

    text: str
    tree: ast.Module
    found_in: CodeFrom


def extract_code(text: str, target: Target) -> Code:
    """The code of a candidate text for `target` (the rules of the module's docstring)."""
    try:
        return Code(text, parse_text(text, "candidate"), CodeFrom.TEXT)
    except SpliceError as as_is:
        problem = as_is
    answer = read_response(text)
    if not answer.text.strip():
        raise SpliceError(_no_answer(answer))
    readable = [(block, _readable(block.code, CodeFrom.BLOCK)) for block in answer.blocks]
    defining = [
        code
        for _, code in readable
        if isinstance(code, Code) and find_candidate_def(code.tree, target) is not None
    ]
    if defining:
        return defining[-1]
    if not answer.blocks:
        whole = _readable(answer.text, CodeFrom.ANSWER)
        if isinstance(whole, Code):
            return whole
        problem = whole
    prose = _in_prose(answer.text, target) if _is_prose(answer.text) else None
    if prose is not None:
        return prose
    if readable:
        chosen = _preferred(readable)
        if isinstance(chosen, Code):
            return chosen
        problem = chosen
    raise problem


def _no_answer(answer: Response) -> str:
    if answer.thought:
        return "candidate has no answer outside its thinking section"
    if answer.ended_by:
        return f"candidate has no answer before {answer.ended_by}"
    return "candidate has no answer but chat markers"


def _readable(text: str, found_in: CodeFrom) -> Code | SpliceError:
    """`text` parsed (dedented where it only parses so), or why it does not parse."""
    try:
        return Code(text, parse_text(text, "candidate"), found_in)
    except SpliceError as first:
        dedented = dedent_code(text)
        if dedented == text:
            return first
        try:
            return Code(dedented, parse_text(dedented, "candidate"), found_in)
        except SpliceError:
            return first


def _preferred(readable: list[tuple[FencedBlock, Code | SpliceError]]) -> Code | SpliceError:
    """Of blocks none of which defines the target: a parsing one, python-tagged first, else the
    largest; where none parses, the problem of the block fences were always read for."""
    parsing = [(block, code) for block, code in readable if isinstance(code, Code)]
    for pool in (parsing, readable):
        tagged = [code for block, code in pool if block.tag in PYTHON_TAGS]
        if tagged:
            return tagged[0]
        if pool:
            return max(pool, key=lambda pair: len(pair[0].code))[1]
    return SpliceError("candidate has no code")


def _is_prose(text: str) -> bool:
    """Whether the text opens or closes with a sentence (a capitalised word, then a space or
    punctuation, and not Python): a reply, not a source file with a syntax error somewhere,
    which stays a candidate that does not parse."""
    lines = [line for line in text.split("\n") if line.strip()]
    return bool(lines) and any(
        _SENTENCE.match(line) is not None
        and isinstance(_readable(line, CodeFrom.PROSE), SpliceError)
        for line in (lines[0], lines[-1])
    )


def _in_prose(text: str, target: Target) -> Code | None:
    """The target's definition written among prose: from the first line of code at the left
    margin to the last line its block goes on to (indented, blank, or more code)."""
    lines = text.split("\n")
    for start, line in enumerate(lines):
        if not _CODE_START.match(line):
            continue
        end = start + 1
        while end < len(lines) and (not lines[end].strip() or _CODE_GOES_ON.match(lines[end])):
            end += 1
        code = _readable("\n".join(lines[start:end]), CodeFrom.PROSE)
        if isinstance(code, Code) and find_candidate_def(code.tree, target) is not None:
            return code
    return None
