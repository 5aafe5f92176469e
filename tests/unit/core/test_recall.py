"""The memorisation signal: how much of a candidate's body is the hidden original's, after names,
strings, numbers and layout are normalised away (docs/design.md §4, Recall)."""

from __future__ import annotations

import ast
import random

from replicate.core.copying import (
    RECALL_RUN,
    Lexeme,
    Token,
    body_lexemes,
    longest_common_run,
    normalised,
    recall,
)
from tests.disguise import renamed_copy

ORIGINAL = '''
def wrap_words(text, width):
    """Greedy word wrap."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines
'''

# The same contract written otherwise: a running length, indices, a final join.
INDEPENDENT = """
def wrap_words(text, width):
    out = []
    current = []
    used = 0
    for piece in text.split():
        extra = len(piece) + (1 if current else 0)
        if current and used + extra > width:
            out.append(" ".join(current))
            current, used = [piece], len(piece)
            continue
        current.append(piece)
        used += extra
    return out + ([" ".join(current)] if current else [])
"""


def tokens(definition: str) -> tuple[Token, ...]:
    node = ast.parse(definition.strip() + "\n").body[0]
    assert isinstance(node, ast.FunctionDef)
    return body_lexemes(node)


def test_the_original_is_all_original() -> None:
    found = recall(tokens(ORIGINAL), tokens(ORIGINAL))
    assert found.copy == 1.0 and found.run == len(tokens(ORIGINAL))


def test_a_renamed_reformatted_copy_with_other_strings_is_still_the_original() -> None:
    disguised = renamed_copy(ORIGINAL.strip())
    assert "renamed_" in disguised and "line" not in disguised.replace("lines", "")  # renamed
    assert "# written from memory" in disguised and "'<>'" in disguised  # laid out, strings
    assert tokens(disguised) != tokens(ORIGINAL)  # the control: the raw tokens differ
    found = recall(tokens(disguised), tokens(ORIGINAL))
    assert found.copy == 1.0 and found.run == len(tokens(ORIGINAL))


def test_an_independent_implementation_shares_only_idioms() -> None:
    found = recall(tokens(INDEPENDENT), tokens(ORIGINAL))
    assert found.copy < 0.3 and found.run < 2 * RECALL_RUN, found


def test_one_statement_changed_keeps_the_rest() -> None:
    edited = ORIGINAL.replace("if line:\n        lines.append(line)", "lines.append(line)")
    found = recall(tokens(edited), tokens(ORIGINAL))
    assert 0.8 <= found.copy < 1.0, found


def test_what_normalising_keeps_and_takes_out() -> None:
    seen: tuple[Token, ...] = (
        (Lexeme.NAME, "total"),
        (Lexeme.OP, "+="),
        (Lexeme.NUMBER, "3"),
        (Lexeme.KEYWORD, "if"),
        (Lexeme.STRING, "'x'"),
        (Lexeme.KEYWORD, "None"),
    )
    assert normalised(seen) == ("N", "+=", "0", "if", "S", "None")


def test_a_body_shorter_than_a_window_counts_only_whole() -> None:
    short = tokens("def f(x):\n    return x + 1\n")
    assert len(short) < RECALL_RUN
    assert recall(short, short).copy == 1.0
    assert recall(tokens("def f(y):\n    return y + 2\n"), short).copy == 1.0  # renamed
    assert recall(tokens("def f(x):\n    return x - 1\n"), short).copy == 0.0
    assert recall(short, tokens(ORIGINAL)).copy == 0.0  # a fragment of a long original
    assert recall((), short).copy == 0.0


def _brute(first: list[str], second: list[str]) -> int:
    best = 0
    for i in range(len(first)):
        for j in range(len(second)):
            k = 0
            while i + k < len(first) and j + k < len(second) and first[i + k] == second[j + k]:
                k += 1
            best = max(best, k)
    return best


def test_the_longest_common_run_is_the_longest() -> None:
    draw = random.Random(7)
    for _ in range(400):
        first = [draw.choice("abc") for _ in range(draw.randint(0, 14))]
        second = [draw.choice("abc") for _ in range(draw.randint(0, 14))]
        assert longest_common_run(first, second) == _brute(first, second), (first, second)
