"""The bundled batch (top-level specs/ and reference_impls/, minted from corpus/samplelib) exported
as rows by the real CLI: every prompt is searched here for every other task's original body
(whitespace normalised), independently of the exporter's own search.

With `--context file` a row shows the other tasks of its file as written (the positive control:
the search finds them); with `--context signatures` no prompt shows any; with `--split-by file`
no test prompt shows a train task's body nor the other way round, where a split by row would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replicate.batch import Batch, LoadedTask
from tests.integration.integrations.rows import body_text, cli
from tests.integration.minted import REPO_ROOT


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def bodies() -> dict[str, tuple[str, ...]]:
    """Each task's hidden bodies: a class task's, each member's (a text showing one of them
    shows part of its answer); another's, its one body."""
    batch = Batch.open(REPO_ROOT)
    return {task_id: hidden(batch.load(task_id)) for task_id in batch.ids}


def hidden(task: LoadedTask) -> tuple[str, ...]:
    members = task.hidden.target.members
    if not members:
        return (flat(body_text(task)),)
    source = task.original_source()
    return tuple(
        flat(source[m.body_span.start_byte : m.body_span.end_byte].decode()) for m in members
    )


def any_in(hidden: tuple[str, ...], text: str) -> bool:
    return any(body in text for body in hidden)


def export(out: Path, *args: str) -> dict[str, Any]:
    done = cli("export", "--tasks", str(REPO_ROOT), "--out", str(out), "--json", *args)
    assert done.returncode == 0, done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


SPLIT = ("--context", "file", "--split-by", "file", "--test-ratio", "0.2")
EXPORTS = {"file": ("--context", "file"), "signatures": (), "class": ("--context", "class")}


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, Any], Path]]:
    """Each export's `--json` summary and its PATH (signatures: the default for rows)."""
    root = tmp_path_factory.mktemp("bundled")
    made = {}
    for name, args in [*EXPORTS.items(), ("split", SPLIT)]:
        made[name] = (export(root / name, *args), root / name)
    return made


def read_parquet(path: Path) -> list[dict[str, Any]]:
    datasets = pytest.importorskip("datasets")
    return list(datasets.load_dataset("parquet", data_files=str(path), split="train"))


def shown(
    row: dict[str, Any], bodies: dict[str, tuple[str, ...]], among: set[str] | None = None
) -> set[str]:
    """The other tasks (of `among`, else all) whose original body the row's prompt holds."""
    text = flat(row["prompt"][0]["content"])
    others = set(bodies) - {row["task_id"]} if among is None else among - {row["task_id"]}
    return {other for other in others if any_in(bodies[other], text)}


Exports = dict[str, tuple[dict[str, Any], Path]]


def test_whole_file_prompts_show_other_tasks_hidden_bodies(
    bodies: dict[str, tuple[str, ...]], exports: Exports
) -> None:
    summary, out = exports["file"]
    rows = read_parquet(out.with_suffix(".parquet"))
    assert sorted(r["task_id"] for r in rows) == sorted(bodies)
    found = {r["task_id"]: shown(r, bodies) for r in rows}
    assert set().union(*found.values()) == set(bodies)  # every task's answer is in some prompt
    pairs = sum(len(v) for v in found.values())
    assert pairs > len(bodies)
    assert {r["task_id"]: set(r["visible_task_ids"]) for r in rows} == found
    assert summary["visible"]["pairs"] == pairs and summary["context"] == "file"
    (warning,) = summary["warnings"]  # as the terminal says it: split by file, not by row
    assert warning.endswith(
        "show other tasks' hidden bodies (visible_task_ids): split with --split-by, not by row"
    )


def test_signature_prompts_show_no_hidden_body(
    bodies: dict[str, tuple[str, ...]], exports: Exports
) -> None:
    summary, out = exports["signatures"]  # the default for rows
    rows = read_parquet(out.with_suffix(".parquet"))
    assert len(rows) == len(bodies) and summary["context"] == "signatures"
    assert {r["task_id"]: shown(r, bodies) for r in rows} == {r["task_id"]: set() for r in rows}
    assert all(r["visible_task_ids"] == [] for r in rows)
    assert summary["visible"] == {
        "tasks_showing_hidden_bodies": 0,
        "pairs": 0,
        "cross_split_pairs": 0,
    }
    assert summary["warnings"] == []  # nothing shown: nothing to warn of
    batch = Batch.open(REPO_ROOT)
    tasks = {task_id: batch.load(task_id) for task_id in bodies}  # each loaded once, not per row
    for row in rows:  # the other tasks of the file are still there, by signature and docstring
        task = tasks[row["task_id"]]
        content = row["prompt"][0]["content"]
        assert task.prompt.strip() in content and "not the whole file" in content
        for other_id in bodies:
            other = tasks[other_id].hidden.target
            if other.path == task.hidden.target.path:
                assert other.signature.strip().splitlines()[-1] in content


def test_class_prompts_list_what_they_show(
    bodies: dict[str, tuple[str, ...]], exports: Exports
) -> None:
    summary, out = exports["class"]
    rows = read_parquet(out.with_suffix(".parquet"))
    found = {r["task_id"]: shown(r, bodies) for r in rows}
    assert {r["task_id"]: set(r["visible_task_ids"]) for r in rows} == found
    whole = exports["file"][0]
    assert 0 < summary["visible"]["pairs"] < whole["visible"]["pairs"]
    assert summary["prompt_lengths"]["chars"]["p50"] < whole["prompt_lengths"]["chars"]["p50"]


def test_split_by_file_keeps_each_answer_on_its_prompt_s_side(
    bodies: dict[str, tuple[str, ...]], exports: Exports
) -> None:
    summary, out = exports["split"]
    assert not out.with_suffix(".parquet").exists()
    train = read_parquet(out.with_suffix(".train.parquet"))
    test = read_parquet(out.with_suffix(".test.parquet"))
    assert train and test and len(train) + len(test) == len(bodies)
    assert summary["splits"] == {"test": len(test), "train": len(train)}
    assert len(test) <= 0.2 * len(bodies)
    assert {r["extra_info"]["split"] for r in train} == {"train"}
    assert {r["extra_info"]["split"] for r in test} == {"test"}
    train_ids, test_ids = {r["task_id"] for r in train}, {r["task_id"] for r in test}
    files = {r["extra_info"]["path"]: r["extra_info"]["split"] for r in train + test}
    assert all(files[r["extra_info"]["path"]] == r["extra_info"]["split"] for r in train + test)
    assert [r for r in test if shown(r, bodies, train_ids)] == []
    assert [r for r in train if shown(r, bodies, test_ids)] == []
    assert sum(len(r["visible_task_ids"]) for r in train + test) > 0  # the prompts do show some
    assert summary["visible"]["cross_split_pairs"] == 0
    # the control: the same rows split by row (every fifth to test) leak across the split
    rows = sorted(train + test, key=lambda r: r["task_id"])
    by_row = {r["task_id"] for r in rows[::5]}
    leaks = [r for r in rows if r["task_id"] in by_row and shown(r, bodies, set(bodies) - by_row)]
    assert leaks


def test_the_export_reports_prompt_lengths_and_the_settings_they_imply(
    exports: Exports, tmp_path: Path
) -> None:
    summary, out = exports["signatures"]
    rows = read_parquet(out.with_suffix(".parquet"))
    longest = max(len(r["prompt"][0]["content"]) for r in rows)
    lengths = summary["prompt_lengths"]
    assert lengths["prompts"] == len(rows) and lengths["chars"]["p100"] == longest
    assert lengths["tokens_estimated"]["p100"] * lengths["chars_per_token"] >= longest
    settings = lengths["settings"]
    assert settings["data.max_prompt_length"] >= lengths["tokens_estimated"]["p100"] > 512
    assert settings["data.truncation"] == "error"
    done = cli("export", "--tasks", str(REPO_ROOT), "--out", str(tmp_path / "table"))
    assert done.returncode == 0 and "data.max_prompt_length" in done.stderr
    assert "p100" in done.stderr and "tokens (est.)" in done.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--format", "inspect", "--context", "class"), "--context class applies to"),
        (("--split", "eval", "--split-by", "file"), "give one of them"),
        (
            (
                "--test-ratio",
                "0.3",
            ),
            "apply with --split-by only",
        ),
        (("--split-by", "file", "--test-ratio", "2"), "a number from 0 to 1"),
    ],
)
def test_options_that_do_not_hold_together_are_one_line(
    args: tuple[str, ...], says: str, tmp_path: Path
) -> None:
    done = cli("export", "--tasks", str(REPO_ROOT), "--out", str(tmp_path / "x"), *args)
    assert done.returncode == 2 and says in done.stderr, done.stderr
    assert done.stderr.strip().count("\n") == 0
    assert not (tmp_path / "x").exists()


def test_a_workspace_shows_its_repository_so_its_tasks_stay_together(
    bodies: dict[str, tuple[str, ...]], tmp_path: Path
) -> None:
    """inspect's workspace is the repository: every other task's body is in it (but those it
    hides itself: a class task's, its members' method tasks), found by the
    same search over its files, and `--split-by file` cannot part them (a warning says so)."""
    out = tmp_path / "inspect"
    args = ("--format", "inspect", "--limit", "3", "--split-by", "file", "--test-ratio", "0.5")
    done = cli("export", "--tasks", str(REPO_ROOT), "--out", str(out), *args)
    assert done.returncode == 0, done.stderr
    assert "none can be held out without a leak" in done.stderr
    samples = json.loads((out / "samples.json").read_text(encoding="utf-8"))["samples"]
    assert len(samples) == 3 and len({s["metadata"]["split_group"] for s in samples}) == 1
    for sample in samples:
        folder = out / sample["workspace"]
        text = flat(
            "\n".join(
                p.read_text(encoding="utf-8", errors="replace")
                for p in folder.rglob("*")
                if p.is_file()
            )
        )
        found = {o for o in bodies if o != sample["task_id"] and any_in(bodies[o], text)}
        own = set(bodies[sample["task_id"]])  # what this workspace hides
        assert found == {o for o in bodies if not set(bodies[o]) <= own}  # all but its own
        assert set(sample["metadata"]["visible_task_ids"]) == found
        assert sample["metadata"]["split"] == "train"
