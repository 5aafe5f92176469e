"""The `replicate` command in subprocesses: one-line errors on bad input, JSON output, exit codes.

Every command runs once, concurrently, in a module-scoped fixture; the tests read the results.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from replicate.batch.store import Batch
from replicate.grading.grader import original_source
from tests.integration.minted import TARGETS, TOO_FEW_MEMBERS, Tiny, make_git_repo, run_cli

CLAMP = "tinypkg.core.clamp"


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    expect: str  # a piece of the error line


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory, tiny: Tiny) -> Path:
    root = tmp_path_factory.mktemp("cli")
    (root / "empty").mkdir()
    make_git_repo(root / "nopython", {"README.md": "no code here\n", "data.txt": "1\n"})
    (root / "not-a-dir").write_text("x")
    (root / "bad-repos.txt").write_text("# a pin without its version\npypi:tomli\n")
    (root / "bad.py").write_text("def clamp(value, low, high)\n    return value\n")
    (root / "right.py").write_bytes(original_source(tiny.task(CLAMP)))
    broken = tiny.copy_batch(root / "broken")
    for spec in (broken / "specs").glob("*/task.json"):
        spec.write_text("{ not json")
    return root


def bad_inputs(root: Path, tiny: Tiny) -> dict[str, Case]:
    batch = str(tiny.batch_dir)
    run = ("run", "--tasks", batch, "--agent", "true")
    grade = ("grade", "--tasks", batch)
    builtin = ("run", "--tasks", batch, "--agent", "builtin:openai", "--model", "m")
    builtin += ("--base-url", "http://127.0.0.1:9/v1")
    return {
        "gen-missing-path": Case(("gen", "--repo", "/no/such/path", "--out", "o1"), "/no/such"),
        "gen-missing-file-url": Case(
            ("gen", "--repo", "file:///no/such/repo.git", "--out", "o2"), "cannot clone"
        ),
        "gen-refused-url": Case(
            ("gen", "--repo", "https://127.0.0.1:9/x.git", "--out", "o3"), "cannot clone"
        ),
        "gen-no-python": Case(
            ("gen", "--repo", str(root / "nopython"), "--out", "o4"), "no Python source files"
        ),
        "gen-empty-dir": Case(("gen", "--repo", str(root / "empty"), "--out", "o5"), "empty"),
        "gen-repos-missing": Case(("gen", "--repos", "/no/such.txt", "--out", "o6"), "cannot read"),
        "gen-repos-bad-pin": Case(
            ("gen", "--repos", str(root / "bad-repos.txt"), "--out", "o7"), "pypi:NAME==VERSION"
        ),
        "gen-npm-empty": Case(("gen", "--repo", "npm:", "--out", "o10"), "npm:NAME@VERSION"),
        "gen-npm-no-version": Case(("gen", "--repo", "npm:x@", "--out", "o11"), "npm:NAME@VERSION"),
        "gen-executor-one-repo": Case(
            ("gen", "--repo", str(root / "empty"), "--out", "o8", "--executor", "ray"),
            "are for --repos",
        ),
        "run-empty-tasks": Case(
            ("run", "--tasks", str(root / "empty"), "--agent", "true", "--out", "r1"), "no tasks"
        ),
        "run-missing-tasks": Case(
            ("run", "--tasks", "/no/such", "--agent", "true", "--out", "r2"),
            "no such task directory",
        ),
        "run-missing-mount": Case((*run, "--out", "r4", "--mount", "/no/such"), "--mount"),
        "run-unknown-task": Case((*run, "--out", "r5", "--task", "nope"), "unknown task id"),
        "run-out-is-a-file": Case((*run, "--out", str(root / "not-a-dir")), "run directory"),
        "run-unknown-builtin": Case(
            ("run", "--tasks", batch, "--agent", "builtin:nope", "--out", "r6"),
            "choose one of builtin:openai, builtin:openai-single",
        ),
        "run-builtin-not-allowed": Case(
            (*builtin, "--api-key-env", "PATH", "--out", "r7"), "--allow-host 127.0.0.1"
        ),
        "run-builtin-no-key": Case(
            (*builtin, "--api-key-env", "REPLICATE_TEST_UNSET", "--out", "r8"), "is not set"
        ),
        "run-builtin-no-model": Case(
            ("run", "--tasks", batch, "--agent", "builtin:openai", "--out", "r10"), "--model"
        ),
        "run-model-for-shell": Case((*run, "--out", "r11", "--model", "m"), "built-in agents"),
        "run-no-samples": Case((*run, "--out", "r12", "--samples", "0"), "--samples"),
        "grade-unknown-task": Case(
            (*grade, "--task", "unknown-id", "--candidate", str(root / "bad.py")),
            "unknown task id 'unknown-id'",
        ),
        "grade-missing-candidate": Case(
            (*grade, "--task", CLAMP, "--candidate", "/no/such/file"), "cannot read candidate"
        ),
        "grade-broken-batch": Case(
            (
                "grade",
                "--tasks",
                str(root / "broken"),
                "--task",
                CLAMP,
                "--candidate",
                str(root / "bad.py"),
            ),
            "broken task.json",
        ),
    }


def good_runs(root: Path, tiny: Tiny) -> dict[str, tuple[str, ...]]:
    batch = str(tiny.batch_dir)
    return {
        "grade-unparsable": (
            "grade",
            "--tasks",
            batch,
            "--task",
            CLAMP,
            "--candidate",
            str(root / "bad.py"),
        ),
        "grade-right": (
            "grade",
            "--tasks",
            batch,
            "--task",
            tiny.id_of(CLAMP),
            "--candidate",
            str(root / "right.py"),
        ),
        "run-json": (
            "run",
            "--tasks",
            batch,
            "--agent",
            "true",
            "--out",
            str(root / "run-out"),
            "--task",
            CLAMP,
            "--json",
        ),
        "unknown-sandbox": (
            "run",
            "--tasks",
            batch,
            "--agent",
            "true",
            "--out",
            "r9",
            "--sandbox",
            "nosuch",
        ),
    }


@pytest.fixture(scope="module")
def results(root: Path, tiny: Tiny) -> dict[str, subprocess.CompletedProcess[str]]:
    jobs = good_runs(root, tiny)
    jobs.update({name: case.args for name, case in bad_inputs(root, tiny).items()})
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {name: pool.submit(run_cli, *args, cwd=root) for name, args in jobs.items()}
        return {name: future.result() for name, future in futures.items()}


BAD = (
    "gen-missing-path",
    "gen-missing-file-url",
    "gen-refused-url",
    "gen-no-python",
    "gen-empty-dir",
    "gen-repos-missing",
    "gen-repos-bad-pin",
    "gen-npm-empty",
    "gen-npm-no-version",
    "gen-executor-one-repo",
    "run-empty-tasks",
    "run-missing-tasks",
    "run-missing-mount",
    "run-unknown-task",
    "run-out-is-a-file",
    "run-unknown-builtin",
    "run-builtin-not-allowed",
    "run-builtin-no-key",
    "run-builtin-no-model",
    "run-model-for-shell",
    "run-no-samples",
    "grade-unknown-task",
    "grade-missing-candidate",
    "grade-broken-batch",
)


@pytest.mark.parametrize("name", BAD)
def test_bad_input_is_one_error_line(
    name: str, root: Path, tiny: Tiny, results: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    done = results[name]
    case = bad_inputs(root, tiny)[name]
    lines = done.stderr.splitlines()
    assert done.returncode != 0
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ") and case.expect in lines[0], lines[0]
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_bad_inputs_are_all_covered(root: Path, tiny: Tiny) -> None:
    assert set(BAD) == set(bad_inputs(root, tiny))


def test_a_bad_installer_setting_is_refused_before_any_work(tiny: Tiny, tmp_path: Path) -> None:
    import os
    import sys

    from tests.integration.minted import REPO_ROOT

    out = tmp_path / "batch"
    done = subprocess.run(
        [sys.executable, "-m", "replicate", "gen", "--repo", str(tiny.repo), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "REPLICATE_INSTALLER": "conda"},
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == "error: unknown REPLICATE_INSTALLER 'conda': choose auto, pip, uv\n"
    assert not out.exists()  # nothing written, nothing to clean up


def test_refused_url_fails_fast(results: dict[str, subprocess.CompletedProcess[str]]) -> None:
    assert "127.0.0.1" in results["gen-refused-url"].stderr


def test_grade_of_unparsable_candidate_is_a_verdict(
    results: dict[str, subprocess.CompletedProcess[str]], tiny: Tiny
) -> None:
    done = results["grade-unparsable"]
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["reward"] == 0.0 and verdict["status"] == "graded"
    assert "does not parse" in verdict["reason"]
    assert verdict["task_id"] == tiny.id_of(CLAMP)


def test_grade_of_the_original(
    results: dict[str, subprocess.CompletedProcess[str]], tiny: Tiny
) -> None:
    done = results["grade-right"]
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert (verdict["reward"], verdict["raw_reward"], verdict["status"]) == (1.0, 1.0, "graded")
    strata = Counter(i.stratum for i in tiny.task(CLAMP).inputs)
    assert strata["traced"] == 4 and strata["widened"] >= 5
    assert verdict["counts"] == [
        {"stratum": name, "total": strata[name], "matched": strata[name]} for name in sorted(strata)
    ]
    assert verdict["counterexample"] is None
    assert verdict["grader_version"] and verdict["schema_version"] == "1"
    assert verdict["copy"] == 1.0 and verdict["copy_run"] > 0  # the original: all original


def test_gen_json_prints_the_funnel(tiny: Tiny) -> None:
    done = tiny.gen  # the session's tiny batch was minted by `replicate gen --json`
    payload = json.loads(done.stdout)
    stages = {s["stage"]: s["count"] for s in payload["stages"]}
    assert list(stages) == ["extracted", "traced", "encodable", "deterministic", "validated"]
    # one function no test calls, a class with one method minted
    assert stages == {**dict.fromkeys(stages, 4), "extracted": TARGETS}
    drops = {s["stage"]: s["drops"] for s in payload["stages"] if s["drops"]}
    assert list(drops) == ["traced"]
    assert sorted(drops["traced"]) == sorted([["not called by the tests", 1], [TOO_FEW_MEMBERS, 1]])
    assert sorted(payload["tasks"]) == sorted(tiny.batch.ids)
    assert payload["repo"] == "tinypkg" and len(payload["commit"]) == 40
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in (tiny.batch_dir / "specs").glob("*.schema.json")) == [
        "funnel.schema.json",
        "result.schema.json",
        "task.schema.json",
        "verdict.schema.json",
    ]


def test_run_json(results: dict[str, subprocess.CompletedProcess[str]], tiny: Tiny) -> None:
    done = results["run-json"]
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["mean_reward"] == 0.0
    (row,) = summary["rows"]
    assert row["task_id"] == tiny.id_of(CLAMP) and row["status"] == "graded"
    assert row["agent_status"] == "ok" and "verdict" not in row
    assert row["copy"] == 0.0 and "copy_run" in row  # the stub left as it was: none of it


def test_unknown_sandbox_is_an_argparse_error(
    results: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    done = results["unknown-sandbox"]
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr.startswith("error: argument --sandbox: invalid choice: 'nosuch'")


def test_gen_records_the_strength_unless_told_not_to(tiny: Tiny, tmp_path: Path) -> None:
    # The session's tiny batch was minted with the defaults: every task has its kill rate.
    for ident in tiny.batch.ids:
        strength = tiny.batch.load(ident).hidden.strength
        assert strength is not None and strength.mutants > 0, ident
        assert 0.0 <= strength.kill_rate <= 1.0 and strength.killed <= strength.mutants
        assert strength.threshold == 0.5 and strength.kill_rate >= 0.5
    out = tmp_path / "batch"
    done = run_cli(
        "gen", "--repo", str(tiny.repo), "--out", str(out), "--limit", "1", "--json",
        "--no-strength",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    batch = Batch.open(out)
    (ident,) = batch.ids
    assert batch.load(ident).hidden.strength is None
