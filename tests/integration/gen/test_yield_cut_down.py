"""Calls whose outcome is too large for a generated input are cut down, and their target minted.

The tests call `tokens` on long texts only: every traced outcome is past the bound a generated
input's outcome may reach (`BULKY_BYTES`), so none seeded the widening (every call varied from
them would answer as largely), the task held only the calls its tests show, and a table of those
scored 1.0: the target was dropped. Now each
traced call gives calls with its text cut to a half, a quarter and an eighth; those whose outcome
fits are generated inputs, and the traced calls stay as they were. The control mints with no cut
allowed (`MAX_CUT = 0`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.batch.store import Batch
from replicate.gen import golden
from tests.integration.gen.drop_classes import before_and_after

CORE = '''"""Words of a text, with where each starts."""


def tokens(text, lower=True):
    """The (position, word) of each word of `text`."""
    found = []
    start = None
    for n, char in enumerate(text + " "):
        if char.isalnum() and start is None:
            start = n
        elif not char.isalnum() and start is not None:
            word = text[start:n]
            found.append((start, word.lower() if lower else word))
            start = None
    return found
'''

TESTS = """from words.core import tokens

TEXT = " ".join(f"W{n % 10}" for n in range(500))  # short for a harvest, its words many


def test_tokens():
    assert tokens(TEXT)[:2] == [(0, "w0"), (3, "w1")]
    assert len(tokens(TEXT[:1400], lower=False)) == 467
    assert tokens(TEXT + " END")[-1] == (1500, "end")
"""

FILES = {
    "pyproject.toml": '[project]\nname = "words"\nversion = "0.1.0"\n',
    "words/__init__.py": "",
    "words/core.py": CORE,
    "tests/test_core.py": TESTS,
}
TOKENS = "words.core.tokens"


def test_a_target_whose_outcomes_are_large_is_minted_from_calls_cut_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_cut(patched: pytest.MonkeyPatch) -> None:
        patched.setattr(golden, "MAX_CUT", 0)

    before, after = before_and_after(tmp_path, FILES, {}, monkeypatch, (TOKENS,), control=no_cut)
    # without calls cut down, no input beside the traced ones: a table of them scores 1.0
    assert before.reasons((TOKENS,)) == {
        TOKENS: "a degenerate program (the visible calls, else raise) scores 0.5 or more"
    }
    task = Batch.open(after.batch).load(TOKENS)
    strata = [i.provenance for i in task.inputs]
    assert strata.count("traced") == 3  # the observed calls, large outcomes and all
    assert strata.count("widened") >= 5
