"""The batch committed at the repository root (specs/, reference_impls/) is what
`replicate gen --repo corpus/samplelib` mints today: same ids, same public files, same hidden
inputs and expected outcomes, same repository snapshot.

Not compared: the `grading` timing limits of the hidden task.json, and its strength's count of
searched inputs (those the original answered within its limit). The limits are derived from the
reference's measured call times (`replicate.gen.settings.timing_settings`: 10x the slowest call
with a 1 s floor, 5x the total + 20 s with a 30 s floor), so a slow or busy machine may move them;
and the dependency `lock` of repo.json, resolved from the package index at gen time (a new pytest
release changes it; the committed lock is what a batch reader uses).
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import REPO_ROOT, Demo, minimum_breaches

CORPUS = REPO_ROOT / "corpus" / "samplelib"
TIMING_FIELDS = ("call_timeout_s", "total_timeout_s")
CACHE_DIRS = frozenset(
    {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".benchmarks"}
)


@pytest.fixture(scope="module")
def fresh(demo: Demo) -> Path:
    """The demo's mint: `replicate gen --repo corpus/samplelib --out DIR` from the repository
    root, exactly (repo.json records `--repo` as given)."""
    assert demo.done.returncode == 0, (demo.done.stdout + demo.done.stderr)[-3000:]
    return demo.out / "batch"


def task_ids(batch: Path) -> list[str]:
    return sorted(p.parent.name for p in (batch / "specs").glob("*/task.json"))


def files(root: Path) -> dict[str, bytes]:
    """Every file under `root` by relative POSIX path, tool caches and bytecode left out."""
    found: dict[str, bytes] = {}
    for here, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in CACHE_DIRS and not d.endswith(".egg-info")]
        for name in names:
            if not name.endswith((".pyc", ".pyo")):
                path = Path(here) / name
                found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def first_difference(committed: Path, minted: Path) -> str:
    lines = difflib.unified_diff(
        committed.read_text(encoding="utf-8").splitlines(),
        minted.read_text(encoding="utf-8").splitlines(),
        f"committed {committed.relative_to(REPO_ROOT)}",
        "minted now",
        lineterm="",
        n=1,
    )
    return "\n".join(list(lines)[:30])


def assert_same_files(fresh: Path, relative_paths: list[str]) -> None:
    differ = [
        rel
        for rel in relative_paths
        if (REPO_ROOT / rel).read_bytes() != (fresh / rel).read_bytes()
    ]
    assert not differ, (
        f"{len(differ)} of {len(relative_paths)} files differ from a fresh gen (re-mint the "
        f"committed batch?), e.g.:\n{first_difference(REPO_ROOT / differ[0], fresh / differ[0])}"
        + "\n".join(["", "all:", *differ[:40]])
    )


def committed_ids() -> list[str]:
    return task_ids(REPO_ROOT)


def test_same_task_ids(fresh: Path) -> None:
    ids = committed_ids()
    assert len(ids) >= 20
    assert task_ids(fresh) == ids


def test_committed_tasks_keep_the_input_minimums() -> None:
    assert minimum_breaches(REPO_ROOT) == []


def test_public_spec_files_identical(fresh: Path) -> None:
    ids = sorted(set(committed_ids()) & set(task_ids(fresh)))
    assert_same_files(
        fresh, [f"specs/{i}/{name}" for i in ids for name in ("task.json", "TASK.md")]
    )


def test_schemas_identical(fresh: Path) -> None:
    names = sorted(p.name for p in (REPO_ROOT / "specs").glob("*.schema.json"))
    assert len(names) >= 4
    assert sorted(p.name for p in (fresh / "specs").glob("*.schema.json")) == names
    assert_same_files(fresh, [f"specs/{name}" for name in names])


def test_hidden_inputs_and_expected_identical(fresh: Path) -> None:
    ids = sorted(set(committed_ids()) & set(task_ids(fresh)))
    names = ("inputs.jsonl", "expected.jsonl")
    assert_same_files(fresh, [f"reference_impls/{i}/{name}" for i in ids for name in names])


def _without_timing(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    for name in TIMING_FIELDS:
        assert name in data["grading"], (path, name)
        data["grading"].pop(name)
    # How many searched inputs the original answered in time: on a machine loaded six times
    # over its cores one of `prime_factors`' 135 ran past its limit (134), the rest equal.
    if isinstance(data.get("strength"), dict):
        data["strength"].pop("searched_inputs", None)
    return data


def test_hidden_task_json_identical_but_timing(fresh: Path) -> None:
    ids = sorted(set(committed_ids()) & set(task_ids(fresh)))
    differ = [
        i
        for i in ids
        if _without_timing(REPO_ROOT / "reference_impls" / i / "task.json")
        != _without_timing(fresh / "reference_impls" / i / "task.json")
    ]
    fields = {i: _differing_fields(i, fresh) for i in differ[:10]}
    assert not differ, f"hidden task.json differs beyond the timing limits: {fields}"


def _differing_fields(task_id: str, fresh: Path) -> dict[str, tuple[Any, Any]]:
    """The top-level fields of a task's hidden task.json that differ, both sides (what a
    failure names: a strength that a loaded machine's timeouts changed reads differently from
    a body that changed)."""
    committed = _without_timing(REPO_ROOT / "reference_impls" / task_id / "task.json")
    minted = _without_timing(fresh / "reference_impls" / task_id / "task.json")
    keys = sorted(set(committed) | set(minted))
    return {k: (committed.get(k), minted.get(k)) for k in keys if committed.get(k) != minted.get(k)}


def _repo_dirs(batch: Path) -> list[Path]:
    return sorted(p.parent for p in (batch / "reference_impls" / "_repos").glob("*/repo.json"))


def test_repo_record_identical_but_lock(fresh: Path) -> None:
    committed, minted = _repo_dirs(REPO_ROOT), _repo_dirs(fresh)
    assert [p.name for p in committed] == [p.name for p in minted]
    assert len(committed) == 1
    old = json.loads((committed[0] / "repo.json").read_text(encoding="utf-8"))
    new = json.loads((minted[0] / "repo.json").read_text(encoding="utf-8"))
    assert old["lock"] and new["lock"]
    old.pop("lock")
    new.pop("lock")
    assert old == new
    assert old["key"] == "samplelib" and len(old["commit"]) == 40


def test_committed_snapshot_is_the_corpus(fresh: Path) -> None:
    (committed,) = _repo_dirs(REPO_ROOT)
    corpus = files(CORPUS)
    snapshot = files(committed / "tree")
    assert "src/samplelib/accounts.py" in corpus
    assert sorted(snapshot) == sorted(corpus)
    assert [rel for rel in corpus if snapshot[rel] != corpus[rel]] == []
    (minted,) = _repo_dirs(fresh)
    assert files(minted / "tree") == snapshot
    assert files(minted / "meta") == files(committed / "meta")
