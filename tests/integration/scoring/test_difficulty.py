"""Difficulty per task: written by `gen`, the same when measured again, and `run` and `export`
choosing tasks by it (`--difficulty`)."""

from __future__ import annotations

import json
from pathlib import Path

from replicate.batch.difficulty_file import (
    DIFFICULTY,
    DifficultyFile,
    SolveRate,
    difficulties,
    read_difficulty,
    task_difficulty,
)
from replicate.batch.store import Batch
from replicate.core.difficulty import MEASURE
from tests.integration.minted import REPO_ROOT, Tiny, run_cli


def test_difficulty_of_the_tiny_tasks(tiny: Tiny) -> None:
    found = {
        s: task_difficulty(tiny.task(s)) for s in ("tinypkg.core.clamp", "tinypkg.core.parse_int")
    }
    clamp, parse = found["tinypkg.core.clamp"], found["tinypkg.core.parse_int"]
    assert clamp.complexity == 3  # two ifs
    assert parse.complexity == 3  # one if, one `or`
    assert (clamp.statements, clamp.body_lines) == (3, 5)  # if, if, return on five lines
    assert clamp.repo_calls == 0
    for symbol, one in found.items():
        task = tiny.task(symbol)
        assert sum(n for _, n in one.strata) == len(task.inputs)
        assert [name for name, _ in one.strata] == ["traced", "widened", "edge", "raises"]
        strength = task.hidden.strength
        assert one.kill_rate == (strength.kill_rate if strength else None)
        assert 0.0 <= one.copy_ratio < 0.8 and one.band == "easy"


def test_gen_writes_every_tasks_difficulty_as_measuring_again_finds_it(
    tiny: Tiny, tmp_path: Path
) -> None:
    written = read_difficulty(tiny.batch_dir)
    assert written is not None and set(written.tasks) == set(tiny.task_ids)
    copy = tiny.copy_batch(tmp_path / "batch")
    (copy / DIFFICULTY).unlink()  # an older batch: measured on the fly
    again = difficulties(Batch.open(copy), tiny.task_ids)
    assert again == written.tasks


def test_run_difficulty_hard_takes_exactly_the_hard_tasks(tiny: Tiny, tmp_path: Path) -> None:
    copy = tiny.copy_batch(tmp_path / "batch")
    written = read_difficulty(copy)
    assert written is not None
    # The tiny tasks are all small; one is marked hard in the file (the one with the most
    # branches) so that choosing by band has something to leave out.
    branchy = max(written.tasks, key=lambda i: (written.tasks[i].difficulty.complexity, i))
    entry = written.tasks[branchy]
    hard = entry.model_copy(
        update={"difficulty": entry.difficulty.model_copy(update={"band": "hard"})}
    )
    edited = DifficultyFile(tasks={**written.tasks, branchy: hard})
    (copy / DIFFICULTY).write_text(edited.model_dump_json(), encoding="utf-8")
    bands = {i: e.difficulty.band for i, e in difficulties(Batch.open(copy), tiny.task_ids).items()}
    expected = {i for i, band in bands.items() if band == "hard"}
    assert expected and expected != set(tiny.task_ids)
    done = run_cli(
        "run", "--tasks", str(copy), "--agent", "true", "--out", str(tmp_path / "run"),
        "--workers", "1", "--difficulty", "hard", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert {row["task_id"] for row in json.loads(done.stdout)["rows"]} == expected


def test_export_difficulty_takes_the_tasks_of_that_band(tmp_path: Path) -> None:
    """On the committed batch (no difficulty file: measured on the fly), which has tasks of
    every band."""
    batch = Batch.open(REPO_ROOT)
    bands = {i: e.difficulty.band for i, e in difficulties(batch, batch.ids).items()}
    expected = {i for i, band in bands.items() if band == "hard"}
    assert expected and expected != set(batch.ids)
    out = tmp_path / "rows"
    done = run_cli("export", "--tasks", str(REPO_ROOT), "--out", str(out), "--difficulty", "hard")
    assert done.returncode == 0, done.stderr[-2000:]
    lines = out.with_suffix(".jsonl").read_text().splitlines()
    assert {json.loads(line)["task_id"] for line in lines} == expected


def test_an_entry_of_another_measure_or_older_fields_is_measured_again_its_solve_rate_kept(
    tiny: Tiny, tmp_path: Path
) -> None:
    copy = tiny.copy_batch(tmp_path / "batch")
    written = read_difficulty(copy)
    assert written is not None
    solve = SolveRate(attempts=2, successes=1, pass_rate=0.5, mean_reward=0.7, run="r", agent="a")
    old = {
        ident: entry.model_copy(
            update={
                "measure": "0",
                "difficulty": entry.difficulty.model_copy(update={"band": "hard"}),
                "solve": solve,
            }
        )
        for ident, entry in written.tasks.items()
    }
    older = DifficultyFile(tasks=old).model_dump(mode="json")
    for entry in older["tasks"].values():  # written before the size features were measured
        for name in ("kind", "lines_hidden", "members", "member_calls", "sequence_steps", "points"):
            del entry["difficulty"][name]
    (copy / DIFFICULTY).write_text(json.dumps(older), encoding="utf-8")
    assert read_difficulty(copy) is not None  # still read: the solve rates are not lost
    again = difficulties(Batch.open(copy), tiny.task_ids)
    for ident, entry in again.items():
        assert entry.measure == MEASURE and entry.solve == solve
        assert entry.difficulty == written.tasks[ident].difficulty  # not the planted band
