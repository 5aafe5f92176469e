"""`replicate explain` on the tiny minted batch: a kept target, a dropped one, the reasons
counted, and the refusals (one line on stderr, exit 2)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from replicate.gen.ledger import LEDGER
from tests.integration.minted import DROPPED, SYMBOLS, TARGETS, TOO_FEW_MEMBERS, Tiny, run_cli


def _refused(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_a_kept_target_names_its_task_and_files(tiny: Tiny) -> None:
    done = run_cli("explain", "--tasks", str(tiny.batch_dir), "clamp", "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    task_id = tiny.id_of(SYMBOLS[1])
    assert (found["symbol"], found["kept"], found["task_id"]) == (SYMBOLS[1], True, task_id)
    assert found["reached"] == "validated" and found["dropped_at"] is None
    assert found["reason_code"] is None
    assert Path(found["spec_dir"]) == tiny.batch_dir / "specs" / task_id
    assert (Path(found["hidden_dir"]) / "task.json").is_file()
    shown = run_cli("explain", "--tasks", str(tiny.batch_dir), SYMBOLS[1])
    assert shown.returncode == 0 and "minted" in shown.stderr and task_id in shown.stderr


def test_a_dropped_target_says_where_and_why(tiny: Tiny) -> None:
    done = run_cli("explain", "--tasks", str(tiny.batch_dir), "shout", "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert (found["symbol"], found["kept"], found["task_id"]) == (DROPPED, False, None)
    assert (found["reached"], found["dropped_at"]) == ("extracted", "traced")
    assert (found["reason"], found["reason_code"]) == ("not called by the tests", "NOT_CALLED")
    shown = run_cli("explain", "--tasks", str(tiny.batch_dir), DROPPED)
    assert "dropped at traced" in shown.stderr and "not called by the tests" in shown.stderr


def test_the_reasons_counted_per_stage(tiny: Tiny) -> None:
    done = run_cli("explain", "--tasks", str(tiny.batch_dir), "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert (found["targets"], found["tasks"]) == (TARGETS, 4)
    traced = next(s for s in found["stages"] if s["stage"] == "traced")
    assert (traced["stage"], traced["kept"]) == ("traced", 4)
    assert sorted(traced["drops"], key=lambda d: d["code"]) == [
        {"reason": TOO_FEW_MEMBERS, "code": "CLASS_TOO_FEW_MEMBERS", "count": 1},
        {"reason": "not called by the tests", "code": "NOT_CALLED", "count": 1},
    ]
    table = run_cli("explain", "--tasks", str(tiny.batch_dir))
    assert "not called by the tests" in table.stderr and f"4 of {TARGETS} targets" in table.stderr


def test_bad_symbols_are_refused_in_one_line(tiny: Tiny) -> None:
    close = _refused(run_cli("explain", "--tasks", str(tiny.batch_dir), "clmap"))
    assert "no target" in close and "close: tinypkg.core.clamp" in close
    several = _refused(run_cli("explain", "--tasks", str(tiny.batch_dir), "core"))
    assert f"matches {TARGETS} targets" in several and all(s in several for s in SYMBOLS)


def test_a_batch_without_a_ledger_is_refused_in_one_line(tiny: Tiny, tmp_path: Path) -> None:
    batch = tiny.copy_batch(tmp_path / "old")
    (batch / LEDGER).unlink()
    line = _refused(run_cli("explain", "--tasks", str(batch), "clamp"))
    assert f"has no {LEDGER}" in line and "mint it again" in line
    missing = _refused(run_cli("explain", "--tasks", str(tmp_path / "none")))
    assert "is not a directory" in missing
