"""Reading and writing task batches: round trip, selection, and one-line errors on broken input."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from replicate.batch.manifest import write_manifest
from replicate.batch.store import HIDDEN, REPOS, SPECS, Batch, remove_task, write_repo, write_task
from replicate.core.records import CallInput
from replicate.errors import ReplicateError
from tests.integration.minted import REPO_ROOT, SYMBOLS, Tiny


def _error(call: Callable[[], object]) -> str:
    """The message of the ReplicateError raised by `call()`; it must be one line."""
    with pytest.raises(ReplicateError) as info:
        call()
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.fixture
def copy(tiny: Tiny, tmp_path: Path) -> Path:
    return tiny.copy_batch(tmp_path / "batch")


def test_write_then_read_round_trip(tiny: Tiny, tmp_path: Path) -> None:
    task = tiny.task("tinypkg.core.parse_int")
    out = tmp_path / "out"
    root = write_repo(out, task.hidden.repo_dir, task.repo.record)
    shutil.copytree(task.repo.tree, root / "tree")
    write_task(out, task.spec, task.hidden, task.prompt, task.inputs, task.expected)
    write_manifest(out)

    batch = Batch.open(out)
    assert batch.ids == (task.id,)
    again = batch.load(task.id)
    assert again.spec == task.spec
    assert again.hidden == task.hidden
    assert again.inputs == task.inputs
    assert dict(again.expected) == dict(task.expected)
    assert again.prompt == task.prompt
    assert again.repo.record == task.repo.record
    assert again.repo.tree == (out / HIDDEN / REPOS / task.hidden.repo_dir / "tree").resolve()
    assert [r.record for r in batch.repos()] == [task.repo.record]
    traced = [i for i in again.inputs if i.provenance == "traced"]
    assert [i.call for i in traced] == [
        "parse_int('12')",
        "parse_int(' -7 ')",
        "parse_int('x1')",
        "parse_int('')",
    ]
    generated = [i for i in again.inputs if i.provenance != "traced"]
    assert len(generated) >= 5 and all(i.replaced for i in generated)
    assert {i.stratum for i in traced if i.call.endswith(("'x1')", "'')"))} == {"raises"}

    remove_task(out, task.id)
    assert not (out / SPECS / task.id).exists() and not (out / HIDDEN / task.id).exists()


def test_tiny_batch_holds_the_four_targets(tiny: Tiny) -> None:
    symbols = sorted(tiny.batch.spec(i).source.symbol for i in tiny.batch.ids)
    assert symbols == sorted(SYMBOLS)
    assert sorted(tiny.task_ids) == sorted(tiny.batch.ids)


def test_open_missing_directory() -> None:
    assert "no such task directory" in _error(lambda: Batch.open("/no/such/batch"))


def test_open_a_file(tmp_path: Path) -> None:
    path = tmp_path / "file.txt"
    path.write_text("x")
    assert "not a directory" in _error(lambda: Batch.open(path))


def test_open_empty_directory(tmp_path: Path) -> None:
    assert "no tasks" in _error(lambda: Batch.open(tmp_path))


def test_folders_without_task_json_are_ignored(copy: Path) -> None:
    before = Batch.open(copy).ids
    (copy / SPECS / "not-a-task").mkdir()
    (copy / SPECS / "not-a-task" / "TASK.md").write_text("# nothing\n")
    assert Batch.open(copy).ids == before
    assert len(before) == 4  # the *.schema.json files beside the tasks are no tasks either
    assert sorted((copy / SPECS).glob("*.schema.json"))


def test_only_folders_without_tasks_is_empty(tmp_path: Path) -> None:
    (tmp_path / SPECS / "a").mkdir(parents=True)
    assert "no tasks" in _error(lambda: Batch.open(tmp_path))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json", "broken task.json"),
        ('{"id": "x"}', "broken task.json"),
        ("", "broken task.json"),
    ],
)
def test_broken_task_json(tiny: Tiny, copy: Path, text: str, expected: str) -> None:
    ident = tiny.id_of("tinypkg.core.clamp")
    (copy / SPECS / ident / "task.json").write_text(text)
    message = _error(lambda: Batch.open(copy, verify=False).load(ident))
    assert expected in message and ident in message


def test_broken_hidden_task_json_names_the_field(tiny: Tiny, copy: Path) -> None:
    ident = tiny.id_of("tinypkg.core.clamp")
    path = copy / HIDDEN / ident / "task.json"
    data = json.loads(path.read_text())
    del data["target"]
    path.write_text(json.dumps(data))
    message = _error(lambda: Batch.open(copy, verify=False).load(ident))
    assert "target" in message and "task.json" in message


def test_task_json_that_is_not_utf8(tiny: Tiny, copy: Path) -> None:
    ident = tiny.id_of("tinypkg.core.clamp")
    (copy / SPECS / ident / "task.json").write_bytes(b'{"id": "\xff\xfe"}')
    assert "UTF-8" in _error(lambda: Batch.open(copy, verify=False).load(ident))


def test_broken_inputs_line(tiny: Tiny, copy: Path) -> None:
    ident = tiny.id_of("tinypkg.core.clamp")
    path = copy / HIDDEN / ident / "inputs.jsonl"
    lines = path.read_text().splitlines()
    lines[1] = lines[1][: len(lines[1]) // 2]
    path.write_text("\n".join(lines) + "\n")
    message = _error(lambda: Batch.open(copy, verify=False).load(ident))
    assert "inputs.jsonl at line 2" in message


def test_broken_expected_line(tiny: Tiny, copy: Path) -> None:
    ident = tiny.id_of("tinypkg.core.clamp")
    path = copy / HIDDEN / ident / "expected.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    assert len(lines) == len(tiny.task("tinypkg.core.clamp").inputs)
    path.write_text("".join(lines) + '{"outcome": {}}\n')
    message = _error(lambda: Batch.open(copy, verify=False).load(ident))
    assert f"expected.jsonl at line {len(lines) + 1}" in message


def test_input_without_expected_outcome(tiny: Tiny, copy: Path) -> None:
    ident = tiny.id_of("tinypkg.core.clamp")
    path = copy / HIDDEN / ident / "expected.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    last = json.loads(lines[-1])["i"]
    assert last == max(i.index for i in tiny.task("tinypkg.core.clamp").inputs)
    path.write_text("".join(lines[:-1]))
    message = _error(lambda: Batch.open(copy, verify=False).load(ident))
    assert f"input {last} has no expected outcome" in message


def test_missing_repo_tree(tiny: Tiny, copy: Path) -> None:
    task = tiny.task("tinypkg.core.clamp")
    shutil.rmtree(copy / HIDDEN / REPOS / task.hidden.repo_dir / "tree")
    assert "tree is missing" in _error(lambda: Batch.open(copy, verify=False).load(task.id))


def test_missing_hidden_half(tiny: Tiny, copy: Path) -> None:
    ident = tiny.id_of("tinypkg.core.clamp")
    shutil.rmtree(copy / HIDDEN / ident)
    assert "cannot read" in _error(lambda: Batch.open(copy, verify=False).load(ident))


def test_unknown_task_id(tiny: Tiny) -> None:
    message = _error(lambda: tiny.batch.load("nope"))
    assert "unknown task id 'nope'" in message and "4 tasks" in message
    assert "unknown task id" in _error(lambda: tiny.batch.resolve("tinypkg.core.nothing"))


def test_resolve_by_id_and_by_symbol(tiny: Tiny) -> None:
    for symbol in SYMBOLS:
        ident = tiny.batch.resolve(symbol)
        assert tiny.batch.resolve(ident) == ident
        assert tiny.batch.spec(ident).source.symbol == symbol
        assert tiny.batch.load(symbol).id == ident
    by_name = {symbol: tiny.batch.resolve(symbol) for symbol in SYMBOLS}
    assert tiny.batch.names() == by_name | {i: i for i in tiny.batch.ids}


def test_select_keeps_order_drops_duplicates_and_limits(tiny: Tiny) -> None:
    batch = tiny.batch
    clamp, evens = batch.resolve("tinypkg.core.clamp"), batch.resolve("tinypkg.core.evens")
    assert batch.select() == batch.ids
    assert batch.select(limit=2) == batch.ids[:2]
    assert batch.select(["tinypkg.core.evens", clamp]) == (evens, clamp)
    assert batch.select([clamp, "tinypkg.core.clamp", clamp]) == (clamp,)
    assert batch.select([evens, clamp], limit=1) == (evens,)


def test_ambiguous_symbol(tiny: Tiny, copy: Path) -> None:
    ident = tiny.id_of("tinypkg.core.clamp")
    twin = ident.rsplit("__", 1)[0] + "__0123456789"
    shutil.copytree(copy / SPECS / ident, copy / SPECS / twin)
    batch = Batch.open(copy, verify=False)
    assert "names 2 tasks" in _error(lambda: batch.resolve("tinypkg.core.clamp"))
    assert batch.resolve(twin) == twin
    assert "tinypkg.core.clamp" not in batch.names() and batch.names()[twin] == twin


def test_committed_batch_opens_read_only() -> None:
    batch = Batch.open(REPO_ROOT)
    assert len(batch.ids) == 86
    task = batch.load(batch.ids[0])
    assert task.inputs and set(task.expected) == {i.index for i in task.inputs}
    assert {i.provenance for i in task.inputs} == {"traced", "widened", "edge"}
    assert task.hidden.baseline is not None and task.hidden.grading.stratum_weights is not None
    assert all(isinstance(i, CallInput) for i in task.inputs)
    assert task.spec.source.repo == "samplelib"
