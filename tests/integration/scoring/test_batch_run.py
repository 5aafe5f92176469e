"""`run_batch` on the tiny batch with the local sandbox: rewards, agent statuses, resuming."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from replicate.agents.protocol import AgentConfig
from replicate.errors import ReplicateError
from replicate.grading.grader import original_source
from replicate.sandbox import get_sandbox
from replicate.scoring.batch_run import RunOptions, RunSummary, run_batch
from replicate.scoring.results import RESULTS_FILE, load_rows
from tests.integration.minted import CORE_PATH, SYMBOLS, Tiny

CLAMP = "tinypkg.core.clamp"


def _run(
    tiny: Tiny,
    out: Path,
    command: str,
    *,
    tasks: tuple[str, ...] = (),
    timeout: float = 60.0,
    mounts: tuple[str, ...] = (),
    samples: int = 1,
    keep: bool = False,
) -> RunSummary:
    agent = AgentConfig(command, get_sandbox("local"), timeout_s=timeout, mounts=mounts)
    options = RunOptions(
        tasks=tiny.batch_dir,
        out=out,
        agent=agent,
        sandbox_name="local",
        workers=2,
        task_ids=tasks,
        samples=samples,
        keep_workspaces=keep,
    )
    return run_batch(options)


def _lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / RESULTS_FILE).read_text().splitlines()]


@pytest.fixture(scope="module")
def solutions(tiny: Tiny, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder the agent may read (by --mount): the original target file, as an answer key."""
    folder = tmp_path_factory.mktemp("answers")
    (folder / "core.py").write_bytes(original_source(tiny.task(CLAMP)))
    return folder


def test_doing_nothing_earns_zero_and_resumes(tiny: Tiny, tmp_path: Path) -> None:
    out = tmp_path / "run"
    summary = _run(tiny, out, "true")
    assert [r.task_id for r in summary.rows] == list(tiny.batch.ids)
    assert all(r.reward == 0.0 and r.status == "graded" for r in summary.rows)
    assert all(r.agent_status == "ok" and r.agent_exit_code == 0 for r in summary.rows)
    assert summary.resumed == 0 and summary.mean_reward == 0.0
    assert {summary.symbols[r.task_id] for r in summary.rows} == set(SYMBOLS)
    assert len(_lines(out)) == 4
    assert not (out / "workspaces").exists() or not any((out / "workspaces").iterdir())
    kept = out / "candidates" / tiny.id_of(CLAMP) / "0.py"
    assert "raise NotImplementedError" in kept.read_text()

    again = _run(tiny, out, "true")
    assert again.resumed == 4 and len(_lines(out)) == 4
    assert again.rows == summary.rows


def test_infra_error_rows_are_retried(tiny: Tiny, tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = _run(tiny, out, "true", tasks=(CLAMP,))
    row = first.rows[0]
    broken = row.model_copy(update={"reward": None, "status": "infra_error", "reason": "x"})
    with (out / RESULTS_FILE).open("a") as handle:
        handle.write(broken.model_dump_json() + "\n")
    assert load_rows(out)[(row.task_id, 0)].status == "infra_error"
    again = _run(tiny, out, "true", tasks=(CLAMP,))
    assert again.resumed == 0
    assert again.rows[0].status == "graded" and again.rows[0].reward == 0.0
    assert [line["status"] for line in _lines(out)] == ["graded", "infra_error", "graded"]


def test_a_different_agent_is_refused(tiny: Tiny, tmp_path: Path) -> None:
    out = tmp_path / "run"
    _run(tiny, out, "true", tasks=(CLAMP,))
    with pytest.raises(ReplicateError, match="different agent"):
        _run(tiny, out, "false", tasks=(CLAMP,))
    assert len(_lines(out)) == 1


def test_failing_agent_is_still_graded_and_what_it_said_and_did_is_kept(
    tiny: Tiny, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    edit = f"sed -i 's/raise NotImplementedError.*/return low/' {CORE_PATH}"
    command = f"echo thinking; echo oops >&2; {edit}; exit 3"
    summary = _run(tiny, out, command, tasks=(CLAMP,))
    row = summary.rows[0]
    assert (row.agent_status, row.agent_exit_code) == ("error", 3)
    assert row.status == "graded" and row.reward is not None and row.reward < 1.0
    ident = tiny.id_of(CLAMP)
    assert (out / "logs" / ident / "0.stdout").read_text() == "thinking\n"
    assert (out / "logs" / ident / "0.stderr").read_text() == "oops\n"
    diff = (out / "diffs" / ident / "0.diff").read_text()
    assert f"--- a/{CORE_PATH}" in diff and "+    return low" in diff, diff
    assert "-    raise NotImplementedError" in diff, diff


def test_right_file_written_through_the_protocol_variables(
    tiny: Tiny, tmp_path: Path, solutions: Path
) -> None:
    answer = shlex.quote(str(solutions / "core.py"))
    command = (
        'test "$PWD" = "$REPLICATE_WORKSPACE" && test -f "$REPLICATE_PROMPT" && '
        f'test "$REPLICATE_TARGET_FILE" = {CORE_PATH} && '
        'test "$(python -c "import tinypkg.core")" = "" && '
        f'cp {answer} "$REPLICATE_WORKSPACE/$REPLICATE_TARGET_FILE"'
    )
    summary = _run(tiny, tmp_path / "run", command, mounts=(str(solutions),))
    assert [(r.status, r.reward, r.agent_status) for r in summary.rows] == [
        ("graded", 1.0, "ok")
    ] * 4, [r.reason for r in summary.rows]
    assert summary.mean_reward == 1.0


def test_work_left_before_a_timeout_is_graded(tiny: Tiny, tmp_path: Path, solutions: Path) -> None:
    answer = shlex.quote(str(solutions / "core.py"))
    command = f'cp {answer} "$REPLICATE_TARGET_FILE" && sleep 60'
    summary = _run(
        tiny, tmp_path / "run", command, tasks=(CLAMP,), timeout=1.5, mounts=(str(solutions),)
    )
    row = summary.rows[0]
    assert row.agent_status == "timeout"
    assert (row.status, row.reward) == ("graded", 1.0), row.reason
    assert row.duration_s < 20


def test_symlinked_target_is_a_violation(tiny: Tiny, tmp_path: Path) -> None:
    command = 'rm "$REPLICATE_TARGET_FILE" && ln -s /etc/hostname "$REPLICATE_TARGET_FILE"'
    summary = _run(tiny, tmp_path / "run", command, tasks=(CLAMP,))
    row = summary.rows[0]
    assert (row.status, row.reward) == ("violation", 0.0)
    assert "symlink" in row.reason


def test_samples_and_kept_workspaces(tiny: Tiny, tmp_path: Path) -> None:
    out = tmp_path / "run"
    summary = _run(
        tiny, out, "echo $REPLICATE_TASK_ID > note.txt", tasks=(CLAMP,), samples=2, keep=True
    )
    assert [(r.task_id, r.sample) for r in summary.rows] == [
        (tiny.id_of(CLAMP), 0),
        (tiny.id_of(CLAMP), 1),
    ]
    for sample in (0, 1):
        note = out / "workspaces" / f"{tiny.id_of(CLAMP)}.{sample}" / "note.txt"
        assert note.read_text().strip() == tiny.id_of(CLAMP)


@pytest.mark.parametrize("verify", [True, False])
def test_a_broken_task_is_refused_before_any_agent_runs(
    tiny: Tiny, tmp_path: Path, verify: bool
) -> None:
    batch = tiny.copy_batch(tmp_path / "batch")
    ident = tiny.id_of(CLAMP)
    (batch / "reference_impls" / ident / "inputs.jsonl").write_text("{broken\n")
    marker = tmp_path / "agent-ran"
    agent = AgentConfig(f"touch {marker}", get_sandbox("plain"))
    options = RunOptions(
        tasks=batch, out=tmp_path / "run", agent=agent, sandbox_name="plain", verify=verify
    )
    with pytest.raises(ReplicateError) as info:
        run_batch(options)
    expected = "changed after minting" if verify else "inputs.jsonl at line 1"
    assert expected in str(info.value) and ident in str(info.value)
    assert not marker.exists() and not (tmp_path / "run" / RESULTS_FILE).exists()


def test_two_runs_on_one_run_dir_one_is_refused_the_other_grades_each_task_once(
    tiny: Tiny, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    args = [
        sys.executable, "-m", "replicate", "run", "--tasks", str(tiny.batch_dir),
        "--agent", "sleep 1", "--out", str(out), "--workers", "2", "--json",
    ]  # fmt: skip
    runs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in "ab"]
    done = [(run.wait(timeout=300), run.stderr.read().decode()) for run in runs if run.stderr]
    codes = sorted(code for code, _ in done)
    assert codes == [0, 2], done
    refusal = next(text for code, text in done if code == 2)
    assert "is in use by another `replicate run` (pid " in refusal
    assert len(refusal.strip().splitlines()) == 1
    ids = [line["task_id"] for line in _lines(out)]
    assert sorted(ids) == sorted(tiny.batch.ids)  # every task once, none twice


def test_run_exits_3_when_an_attempt_is_an_infra_error(tiny: Tiny, tmp_path: Path) -> None:
    out = tmp_path / "run"
    cache = tmp_path / "cache-is-a-file"
    cache.write_text("x")  # no environment can be built: the grade fails on our side
    env = {**os.environ, "REPLICATE_CACHE": str(cache)}
    done = subprocess.run(
        [sys.executable, "-m", "replicate", "run", "--tasks", str(tiny.batch_dir),
         "--agent", "true", "--out", str(out), "--task", CLAMP],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("1 of 1 attempt(s) failed on our side")
    assert [line["status"] for line in _lines(out)] == ["infra_error"]
