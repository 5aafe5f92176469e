"""Gens of tiny real git repositories for the drop-class tests: targets a former harvest or gen
dropped, minted now. Each test mints its repository twice, in this process (so a control can
take a mend out with monkeypatch): with the mend taken out (the targets dropped: the control) and
as shipped (tasks), then grades the reference (1.0) and the stub (0.0) on the new tasks."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from replicate.batch.store import Batch
from replicate.cache import cache_root
from replicate.cli.main import main
from replicate.grading.grader import grade_text
from replicate.harvest import collect
from replicate.jail import Jail
from replicate.jail import calls as calls_module
from replicate.jail.context import context_for
from replicate.jail.runner.base import wire_beside
from replicate.sandbox import get_sandbox
from tests.integration.minted import make_git_repo


@dataclass(frozen=True)
class Gen:
    batch: Path
    entries: dict[str, dict[str, Any]]  # funnel.jsonl's line per target symbol

    def kept(self, symbols: Iterable[str]) -> list[str]:
        return [s for s in symbols if self.entries.get(s, {}).get("kept")]

    def reasons(self, symbols: Iterable[str]) -> dict[str, str]:
        return {s: str(self.entries.get(s, {}).get("reason")) for s in symbols}


def gen(repo: Path, out: Path, *options: str) -> Gen:
    """`replicate gen` of `repo` into `out` (no strength stage: what these tests look at is
    what the harvest records and the golden run keeps)."""
    argv = ["gen", "--repo", str(repo), "--out", str(out), "--no-strength", "--workers", "2"]
    assert main([*argv, *options]) == 0
    lines = (out / "funnel.jsonl").read_text(encoding="utf-8").split("\n")
    entries = [json.loads(line) for line in lines if line.strip()]
    return Gen(out, {e["symbol"]: e for e in entries})


def reference_and_stub(batch: Path, symbol: str) -> tuple[float | None, float | None]:
    """The rewards of the task's reference body and of its stub."""
    task = Batch.open(batch).load(symbol)
    jail = Jail(context_for(task.repo, cache_root()), get_sandbox("local"))
    right = grade_text(task, task.original_source().decode(), jail)
    stub = grade_text(task, task.stubbed_source().decode(), jail)
    return right.reward, stub.reward


def edit_shipped(monkeypatch: pytest.MonkeyPatch, edits: dict[str, tuple[str, str]]) -> None:
    """The harvest installs its shipped files with `old` replaced by `new` in each file named
    (a mend taken out, for a control)."""
    install = collect.install_plugin

    def edited(folder: Path) -> None:
        install(folder)
        for name, (old, new) in edits.items():
            text = (folder / name).read_text(encoding="utf-8")
            assert old in text, (name, old)
            (folder / name).write_text(text.replace(old, new), encoding="utf-8")

    monkeypatch.setattr(collect, "install_plugin", edited)


def edit_runner(monkeypatch: pytest.MonkeyPatch, folder: Path, old: str, new: str) -> None:
    """Jails start a copy of the runner (in `folder`) with `old` replaced by `new` in the one
    part that holds it (a mend taken out, for a control)."""
    source = Path(calls_module.RUNNER_PATH)
    copy = folder / "runner" / source.name
    shutil.copytree(source.parent, copy.parent, ignore=shutil.ignore_patterns("__pycache__"))
    holding = [part for part in copy.parent.glob("*.py") if old in part.read_text()]
    assert len(holding) == 1, holding
    holding[0].write_text(holding[0].read_text().replace(old, new))
    shutil.copy(wire_beside(str(source)), wire_beside(str(copy)))
    monkeypatch.setattr(calls_module, "RUNNER_PATH", copy)


def before_and_after(
    root: Path,
    files: dict[str, str],
    without: dict[str, tuple[str, str]],
    monkeypatch: pytest.MonkeyPatch,
    symbols: Iterable[str],
    runner: tuple[str, str] | None = None,
    control: Callable[[pytest.MonkeyPatch], None] | None = None,
) -> tuple[Gen, Gen]:
    """A repository of `files` minted with the shipped files edited by `without`, the runner
    by `runner` and whatever `control` patches (the control), and as shipped; the counts
    printed; every target of `symbols` minted the second time, its reference scoring 1.0 and
    its stub 0.0."""
    repo = make_git_repo(root / "repo", files)
    with monkeypatch.context() as patched:
        edit_shipped(patched, without)
        if runner is not None:
            edit_runner(patched, root / "jail", *runner)
        if control is not None:
            control(patched)
        before = gen(repo, root / "before")
    after = gen(repo, root / "after")
    report(before, after, symbols)
    assert after.kept(symbols) == list(symbols), after.reasons(symbols)
    for symbol in symbols:
        assert reference_and_stub(after.batch, symbol) == (1.0, 0.0)
    return before, after


def report(before: Gen, after: Gen, symbols: Iterable[str]) -> None:
    """The before/after counts, printed for the record (`pytest -s`)."""
    symbols = list(symbols)
    line = {
        "package": symbols[0].split(".")[0] if symbols else "",
        "tasks before": len(before.kept(symbols)),
        "tasks after": len(after.kept(symbols)),
        "reasons before": before.reasons(symbols),
    }
    print(json.dumps(line), file=sys.stderr)
