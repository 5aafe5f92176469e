"""A method whose `self` is large is minted with generated inputs as large as its traced ones.

A method's outcome holds its `self` after the call; `Ledger`'s holds 800 fields (~30 KB),
past the bound a generated input's outcome may reach (`BULKY_BYTES`, 20 KB). Every generated
call on it was "outcome too large for a generated input", and cutting the arguments down does
not shrink a `self` of many fields: the target was dropped (prettytable 3.19.0 lost 13 methods
so). Now a method's generated inputs may be as large as its largest traced outcome (up to
`MAX_BULKY_BYTES`). The control mints with that allowance taken out."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.batch.store import Batch
from replicate.gen.sizes import BULKY_BYTES, Sizes
from tests.integration.gen.drop_classes import before_and_after

CORE = '''"""A ledger of many entries."""


class Ledger:
    def __init__(self, accounts):
        for n in range(accounts):  # one field each: no list to cut down
            setattr(self, f"account{n}", n)
        self.accounts = accounts

    def scaled(self, factor, offset=0):
        """How many accounts, times `factor`, plus `offset`; negative factors count none."""
        if factor < 0:
            return offset
        return self.accounts * factor + offset
'''

TESTS = """from books.core import Ledger

def test_scaled():
    ledger = Ledger(800)  # a pickle small enough to vary (a seed), its encoding ~30 KB
    assert ledger.scaled(1) == 800
    assert ledger.scaled(2, 5) == 1605
    assert ledger.scaled(-1, 7) == 7
"""

FILES = {
    "pyproject.toml": '[project]\nname = "books"\nversion = "0.1.0"\n',
    "books/__init__.py": "",
    "books/core.py": CORE,
    "tests/test_core.py": TESTS,
}
SCALED = "books.core.Ledger.scaled"


def test_a_method_with_a_large_self_keeps_its_generated_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_allowance(patched: pytest.MonkeyPatch) -> None:
        patched.setattr(Sizes, "allow_as_large_as", lambda self, outcomes: None)

    before, after = before_and_after(
        tmp_path, FILES, {}, monkeypatch, (SCALED,), control=no_allowance
    )
    # without it, no generated input beside the traced ones: a table of those scores 1.0
    assert before.reasons((SCALED,)) == {
        SCALED: "a degenerate program (the visible calls, else raise) scores 0.5 or more"
    }
    task = Batch.open(after.batch).load(SCALED)
    strata = [i.provenance for i in task.inputs]
    assert strata.count("traced") == 3 and strata.count("widened") >= 5
    expected = (after.batch / "reference_impls" / task.id / "expected.jsonl").read_text()
    assert max(len(line) for line in expected.split("\n")) > BULKY_BYTES
