"""Tests the repository declares outside the usual folders are harvested: a root-level `test.py`
of unittest cases (run by its CI as `python test.py`) and a folder only its tox commands name.
The control: with the declarations unread (what the harvest did before), pytest collects
nothing and no call is recorded."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from replicate.batch import LoadedTask
from replicate.harvest import collect
from replicate.harvest.collect import run_harvest
from replicate.harvest.declared import DeclaredPath, declared_tests
from replicate.jail import Jail, RepoContext, get_sandbox

ROOT_TEST = """
import unittest

from tinypkg.core import clamp


class ClampTest(unittest.TestCase):
    def test_low(self):
        self.assertEqual(clamp(-5, 0, 9), 0)


if __name__ == "__main__":
    unittest.main()
"""

SPEC = """
from tinypkg.core import clamp


def test_high():
    assert clamp(50, 0, 9) == 9
"""


def _harvest(ctx: RepoContext, task: LoadedTask, root: Path) -> tuple[list[str], tuple[str, ...]]:
    tree = root / "tree"
    shutil.copytree(ctx.tree, tree, symlinks=True)
    shutil.rmtree(tree / "tests")
    (tree / "test.py").write_text(ROOT_TEST)
    (tree / "spec").mkdir()
    (tree / "spec" / "clamp_spec.py").write_text(SPEC)
    (tree / "tox.ini").write_text("[testenv]\ncommands = py.test spec/clamp_spec.py\n")
    target = task.hidden.target
    jail = Jail(dataclasses.replace(ctx, tree=tree), get_sandbox("local"))
    found = run_harvest(jail, {target.symbol: target}, timeout_s=300)
    return sorted(call.origin for call in found.calls.get(target.symbol, ())), found.notes


def test_declared_tests_are_harvested(
    tiny_ctx: RepoContext,
    tiny_task: Callable[[str], LoadedTask],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    task = tiny_task("tinypkg.core.clamp")
    reads: list[Path] = []

    def counted(tree: Path, roots: Sequence[str]) -> list[DeclaredPath]:
        reads.append(tree)
        return declared_tests(tree, roots)

    monkeypatch.setattr(collect, "declared_tests", counted)
    origins, notes = _harvest(tiny_ctx, task, tmp_path / "declared")
    assert any("test.py" in o for o in origins) and any("clamp_spec.py" in o for o in origins)
    assert any("spec/clamp_spec.py (tox.ini commands)" in n for n in notes)
    assert len(reads) == 1  # the declarations are read once per harvest, for paths and note
    monkeypatch.setattr(collect, "declared_tests", lambda tree, roots: ())
    assert _harvest(tiny_ctx, task, tmp_path / "control") == ([], ())
