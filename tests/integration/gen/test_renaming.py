"""A lookup method whose tests ask only of the names they registered mints, by renamed calls.

The repository's tests register a name and ask `has(name)` of it: every visible call that
answers True holds its name in `self`, and every generated name is one the registry lacks, so
a table of the visible calls that answers False otherwise matches the reference on every hidden
input.  Widened and edge inputs alone cannot pull it under the floor (the control); renamed
calls (the name renamed in the argument and in the registry alike) can.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from replicate.batch.store import Batch, LoadedTask
from replicate.cache import cache_root
from replicate.gen import separate
from replicate.gen.baseline import baseline, too_weak
from replicate.gen.separate import separating
from replicate.jail import Jail
from replicate.jail.context import context_for
from replicate.jail.sandbox.base import Sandbox
from replicate.values import plain
from tests.integration.minted import make_git_repo, run_cli

CORE = '''"""Plugins registered by name."""


class Registry:
    def __init__(self):
        self._plugins = {}
        self._blocked = set()

    def register(self, name, plugin):
        """Register plugin under name, unless the name is blocked; the name, or None."""
        if name in self._blocked:
            return None
        self._plugins[name] = plugin
        return name

    def block(self, name):
        """Block name, dropping what it registered."""
        self._blocked.add(name)
        self._plugins.pop(name, None)

    def has(self, name):
        """Whether a plugin is registered under name."""
        return name in self._plugins
'''

TESTS = """import pytest

from regpkg.core import Registry


@pytest.mark.parametrize("name", ["alpha", "beta", "gamma", "delta"])
def test_has(name):
    registry = Registry()
    registry.register(name, 1)
    assert registry.has(name)
    registry.block(name)
    assert not registry.has(name)
    assert registry.register(name, 2) is None
"""

FILES = {
    "pyproject.toml": '[project]\nname = "regpkg"\nversion = "0.1.0"\n',
    "src/regpkg/__init__.py": "",
    "src/regpkg/core.py": CORE,
    "tests/test_core.py": TESTS,
}
HAS = "regpkg.core.Registry.has"
TESTED = {"alpha", "beta", "gamma", "delta"}


@pytest.fixture(scope="module")
def minted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("registry")
    repo = make_git_repo(root / "repo", FILES)
    out = root / "batch"
    done = run_cli("gen", "--repo", str(repo), "--out", str(out), "--json", timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def _only_visible(task: LoadedTask) -> LoadedTask:
    traced = tuple(i for i in task.inputs if i.visible)
    expected = {i.index: task.expected[i.index] for i in traced}
    return dataclasses.replace(task, inputs=traced, expected=expected)


def test_the_lookup_mints_with_renamed_calls_among_its_hidden_inputs(minted: Path) -> None:
    funnel = [json.loads(line) for line in (minted / "funnel.jsonl").read_text().splitlines()]
    stage = {row["symbol"]: row["stage"] for row in funnel}
    assert stage[HAS] == "validated", [r for r in funnel if r["symbol"] == HAS]
    task = Batch.open(minted).load(HAS)
    renamed_true = []
    for item in task.inputs:
        outcome = task.expected[item.index]
        names = [plain.decode(r.value) for r in item.replaced]
        if names and names[0] not in TESTED and outcome.get("value") == plain.encode(True):
            renamed_true.append(names[0])
    assert renamed_true, "no hidden input asks of a registered name the tests never used"


def test_without_renamed_calls_the_table_of_the_visible_calls_stays_at_the_floor(
    minted: Path, local_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = _only_visible(Batch.open(minted).load(HAS))
    jail = Jail(context_for(task.repo, cache_root()), local_sandbox)
    found = baseline(task, jail)
    assert not isinstance(found, str) and too_weak(found)
    monkeypatch.setattr(separate, "RENAMES", 0)
    plain_search = separating(task, found, jail)
    assert not isinstance(plain_search, str)
    assert not _under_floor(task, plain_search, jail)  # the control: widening cannot
    monkeypatch.undo()
    extra = separating(task, found, jail)
    assert not isinstance(extra, str)
    assert _under_floor(task, extra, jail)


def _under_floor(task: LoadedTask, extra: separate.Separating, jail: Jail) -> bool:
    start = max(i.index for i in task.inputs) + 1
    added = [i.model_copy(update={"index": start + n}) for n, i in enumerate(extra.added)]
    outcomes = {start + n: extra.expected[i.index] for n, i in enumerate(extra.added)}
    widened = dataclasses.replace(
        task, inputs=(*task.inputs, *added), expected={**task.expected, **outcomes}
    )
    again = baseline(widened, jail)
    assert not isinstance(again, str)
    return too_weak(again) is None
