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
import pickle
from pathlib import Path

import pytest

from replicate.batch.store import Batch, LoadedTask
from replicate.cache import cache_root
from replicate.gen import separate
from replicate.gen.baseline import baseline, too_weak
from replicate.gen.separate import separating
from replicate.harvest.by_value_pickler import ByValue
from replicate.inputs.renaming import BY_VALUE_CLASS, own_classes, renamed, strings_and_globals
from replicate.jail import Jail, by_value_module
from replicate.jail.context import context_for
from replicate.sandbox.base import Sandbox
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


def _carried(registry: object, spec: type) -> bytes:
    made = ByValue(by_value_module.module_file(), lambda _: False).dumps(((registry, spec), {}), 4)
    assert made is not None
    return made


def test_a_renamed_call_carries_its_own_copy_of_a_class_the_tests_defined() -> None:
    """cloudpickle makes one class per id in a process and updates it from the next pickle
    with that id: a renamed copy of a test's class loaded first would rename the seed's class
    for every input loaded after it in the same run."""

    class Spec:  # defined in a test: carried by value
        def hook_one(self) -> int:
            return 1

    registry = _Holder({"hook_one": 1})
    data = _carried(registry, Spec)
    held, _ = strings_and_globals(data)
    ids = [s for s in held if s.startswith(BY_VALUE_CLASS)]
    assert ids, "the harvest's by-value class ids are not where renaming looks for them"
    # The control: renamed alone, the two pickles share the class id and so one class.
    shared = renamed(data, "hook_one", "hook_two")
    assert shared is not None
    (_, renamed_spec), _ = pickle.loads(shared)
    (_, seed_spec), _ = pickle.loads(data)
    assert seed_spec is renamed_spec and hasattr(seed_spec, "hook_two")
    # With its own class ids, the renamed call's class is another class.
    other = _carried(_Holder({"hook_one": 1}), _fresh_spec())
    held, _ = strings_and_globals(other)
    own = renamed(other, "hook_one", "hook_two", own_classes(held, "renamed-7"))
    assert own is not None
    (holder, renamed_spec), _ = pickle.loads(own)
    (_, seed_spec), _ = pickle.loads(other)
    assert seed_spec is not renamed_spec
    assert hasattr(renamed_spec, "hook_two") and not hasattr(seed_spec, "hook_two")
    assert holder.names == {"hook_two": 1}


def _fresh_spec() -> type:
    class Spec:
        def hook_one(self) -> int:
            return 1

    return Spec


class _Holder:
    def __init__(self, names: dict[str, int]) -> None:
        self.names = names


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
