"""The degenerate families at work on a repository made for them, minted through the CLI: an
original that is itself a degenerate program is dropped with that reason, and a two-branch
function that mostly takes its second parameter's branch is minted with a baseline that pays
`return <second parameter>` nothing, which the baseline before the families did pay (the
positive control)."""

from __future__ import annotations

import json
from pathlib import Path

from replicate.batch.store import Batch
from replicate.core import DropReason
from replicate.grading.reward import MAX_DEGENERATE_REWARD, normalise
from tests.integration.minted import make_git_repo, run_cli

CODE = '''"""Functions for the degenerate families."""


def passthrough(value, strict=False):
    """Return value (a hook subclasses replace)."""
    return value


def prefer(override, default):
    """The default unless an override is given (an override is rare)."""
    if override is not None and override != "":
        return override.strip()
    return default
'''

TESTS = """from fampkg import passthrough, prefer


def test_passthrough():
    assert passthrough(1) == 1
    assert passthrough("a", strict=True) == "a"
    assert passthrough([1, 2]) == [1, 2]


def test_prefer():
    assert prefer(None, "a") == "a"
    assert prefer(None, "b") == "b"
    assert prefer("", "c") == "c"
    assert prefer(None, "d") == "d"
    assert prefer(" x ", "e") == "x"
"""

FILES = {
    "pyproject.toml": '[project]\nname = "fampkg"\nversion = "0.1.0"\n',
    "src/fampkg/__init__.py": "from fampkg.core import passthrough, prefer\n",
    "src/fampkg/core.py": CODE,
    "tests/test_core.py": TESTS,
}
NEW = ("return parameter", "return empty")  # the families gen did not grade before


def test_the_families_drop_an_identity_and_set_the_baseline_of_a_branch(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "famrepo", FILES)
    out = tmp_path / "batch"
    done = run_cli("gen", "--repo", str(repo), "--out", str(out), "--json", timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    explained = run_cli("explain", "--tasks", str(out), "passthrough", "--json")
    assert explained.returncode == 0, explained.stderr
    why = json.loads(explained.stdout)
    assert why["reason"] == DropReason.DEGENERATE_ORIGINAL, why
    assert "its body is `return value`" in why["detail"], why
    batch = Batch.open(out)
    found = batch.load(batch.resolve("fampkg.core.prefer")).hidden.baseline
    assert found is not None
    second = {p.program: p.raw_reward for p in found.programs}["return parameter default"]
    assert normalise(second, found.raw_reward) <= MAX_DEGENERATE_REWARD
    # The control: against the baseline of the programs gen graded before, it earns.
    before = max(p.raw_reward for p in found.programs if not _new(p.program))
    assert normalise(second, before) > MAX_DEGENERATE_REWARD, (second, before, found)


def _new(program: str) -> bool:
    return program.removeprefix("visible calls, else ").startswith(NEW)
