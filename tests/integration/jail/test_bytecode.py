"""Host-compiled repository code for the jail: every module but the target, never the target."""

from __future__ import annotations

import marshal
import os
from pathlib import Path

import pytest

from replicate.grading.grader import original_source
from replicate.jail import calls as jail
from replicate.jail.bytecode import SHARDS, _fingerprint, bytecode_table, shard_of
from replicate.jail.calls import RepoContext, run_calls
from replicate.sandbox import get_sandbox
from tests.integration.minted import CORE_PATH, Tiny

# A candidate that looks for the reference's code where the runner keeps the compiled table and
# runs it; when there is none it answers 42 (wrong on the tiny tests' inputs).
RECOVER = b"""
import marshal as _m, sys as _s

_entry = getattr(_s.modules.get("_replicate_runner.importing"), "_BYTECODE", {}).get(__file__)
if _entry is not None:
    exec(_m.loads(_entry[2]), globals())
else:
    def clamp(value, low, high):
        return 42

    def __getattr__(name):  # what the package imports from this module
        return None
"""

# Reports how the package and this module were loaded.
REPORT = b"""
import sys as _s

def clamp(value, low, high):
    runner = _s.modules["_replicate_runner.importing"]
    package = _s.modules["tinypkg"]
    return [type(package.__loader__).__name__, package.__file__ in runner._BYTECODE,
            __file__ in runner._BYTECODE]
"""


def _table(*paths: Path) -> dict[str, tuple[int, int, bytes]]:
    """The tables at `paths` read as the runner reads them, into one."""
    merged = {}
    for path in paths:
        table = marshal.loads(path.read_bytes())
        assert isinstance(table, dict)
        merged.update(table)
    return merged


def _own_tables(ctx: RepoContext) -> tuple[Path, ...]:
    assert ctx.cache is not None
    paths = bytecode_table(ctx.cache, ctx.tree, ctx.python, CORE_PATH)
    assert paths
    return paths


def _full(tables: tuple[Path, ...]) -> Path:
    """The full table of the tree these tables are of (never mounted)."""
    return tables[-1].parent.parent / "full.marshal"


def test_the_tables_hold_every_module_but_the_target(tiny_ctx: RepoContext) -> None:
    tables = _own_tables(tiny_ctx)
    table = _table(*tables)
    tree = Path(os.path.realpath(tiny_ctx.tree))
    assert str(tree / CORE_PATH) not in table
    init = tree / "src/tinypkg/__init__.py"
    size, mtime_ns, code = table[str(init)]
    assert (size, mtime_ns) == (init.stat().st_size, init.stat().st_mtime_ns)
    assert marshal.loads(code).co_filename == str(init)
    # The full table (never mounted) does hold the target: the copy is what keeps it out.
    full = _table(_full(tables))
    assert str(tree / CORE_PATH) in full and set(full) == {*table, str(tree / CORE_PATH)}
    # and so does the shard the target falls in, which no jail of it mounts
    shard = tables[-1].parent.parent / "shards" / f"{shard_of(str(tree / CORE_PATH))}.marshal"
    assert str(tree / CORE_PATH) in _table(shard) and shard not in tables


def _package(tree: Path, modules: int) -> list[str]:
    """A package of `modules` modules of ~40 functions each; their paths, relative."""
    (tree / "pkg").mkdir(parents=True)
    paths = []
    for number in range(modules):
        body = "".join(f"def f{i}(x):\n    return x * {i} + {number}\n" for i in range(40))
        (tree / f"pkg/m{number}.py").write_text(body)
        paths.append(f"pkg/m{number}.py")
    return paths


def test_every_file_s_tables_hold_the_package_once_and_a_sixteenth_per_file(
    tiny_ctx: RepoContext, tmp_path: Path
) -> None:
    tree = tmp_path / "tree"
    paths = _package(tree, 48)
    made = {path: bytecode_table(tmp_path / "cache", tree, tiny_ctx.python, path) for path in paths}
    full = _full(made[paths[0]])
    for path, tables in made.items():  # each jail sees every module but its own
        assert set(_table(*tables)) == set(_table(full)) - {str(tree.resolve() / path)}
    copies = sum(tables[-1].stat().st_size for tables in made.values())
    shards = sum(p.stat().st_size for p in (full.parent / "shards").glob("[0-9]*.marshal"))
    # a whole table per file held the package 48 times; the shards once, the copies ~3 times
    assert shards < 1.01 * full.stat().st_size
    assert copies < 48 / SHARDS * 1.6 * full.stat().st_size


def test_the_jail_loads_the_package_compiled_and_the_candidate_from_source(
    tiny: Tiny, tiny_ctx: RepoContext
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    run = run_calls(
        tiny_ctx,
        task.hidden.target,
        task.inputs[:1],
        get_sandbox("local"),
        task.hidden.grading,
        override=original_source(task) + REPORT,
    )
    value = next(iter(run.parsed.outcomes.values()))["value"]
    assert value == {
        "t": "list",
        "v": [
            {"t": "str", "v": "_CompiledLoader"},
            {"t": "bool", "v": True},  # the package's code came from the table
            {"t": "bool", "v": False},  # the candidate's file has no entry
        ],
    }


def _graded(tiny: Tiny, ctx: RepoContext) -> dict[int, object]:
    task = tiny.task("tinypkg.core.clamp")
    run = run_calls(
        ctx,
        task.hidden.target,
        task.inputs,
        get_sandbox("local"),
        task.hidden.grading,
        override=RECOVER,
    )
    right = {i: task.expected[i].get("value") for i in run.parsed.outcomes}
    return {i: o.get("value") == right[i] for i, o in run.parsed.outcomes.items()}


def test_a_candidate_cannot_recover_the_target_from_the_table(
    tiny: Tiny, tiny_ctx: RepoContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    tables = _own_tables(tiny_ctx)
    full = _full(tables)
    # Positive control: were the full table mounted, the attack would answer every input right.
    monkeypatch.setattr(jail, "bytecode_table", lambda *args: (full,))
    leaked = _graded(tiny, tiny_ctx)
    assert leaked and all(leaked.values())
    monkeypatch.undo()
    held = _graded(tiny, tiny_ctx)
    assert held and not any(held.values())


def test_the_tree_is_walked_once_per_process(tiny_ctx: RepoContext, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    for name in ("a", "b", "c"):
        (tree / f"pkg/{name}.py").write_text(f"{name.upper()} = 1\n")
    _fingerprint.cache_clear()
    for name in ("a", "b", "c"):
        assert bytecode_table(tmp_path / "cache", tree, tiny_ctx.python, f"pkg/{name}.py")
    info = _fingerprint.cache_info()
    assert (info.misses, info.hits) == (1, 2)


def test_a_tree_checked_out_again_gets_a_fresh_table(tiny_ctx: RepoContext, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg/a.py").write_text("A = 1\n")
    (tree / "pkg/b.py").write_text("B = 2\n")
    first = bytecode_table(tmp_path / "cache", tree, tiny_ctx.python, "pkg/a.py")
    assert first and set(_table(*first)) == {str(tree.resolve() / "pkg/b.py")}
    os.utime(tree / "pkg/b.py", ns=(1, 1))  # as a new checkout leaves it
    bytecode_table.cache_clear()  # a new process
    _fingerprint.cache_clear()
    second = bytecode_table(tmp_path / "cache", tree, tiny_ctx.python, "pkg/a.py")
    assert second and second != first
    ((size, mtime_ns, _),) = _table(*second).values()
    assert (size, mtime_ns) == (6, 1)  # entries match the files as they are now
