"""The repository's own tests as an extra signal: pristine file passes, a stub fails them."""

from __future__ import annotations

from pathlib import Path

from replicate.core.records import Verdict
from replicate.grading.grader import original_source, stubbed_source
from replicate.grading.repo_tests import node_ids, run_repo_tests, with_repo_tests
from replicate.jail import Jail
from replicate.jail.calls import RepoContext
from replicate.sandbox.base import Sandbox
from tests.integration.minted import Tiny, run_cli


def test_selected_tests_pass_on_the_original_and_fail_on_the_stub(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    ids = node_ids(task.inputs)
    assert ids and all("::" in i for i in ids)
    target = task.hidden.target
    original = run_repo_tests(Jail(tiny_ctx, local_sandbox), target, original_source(task), ids)
    assert original.selected == len(ids) and original.passed == len(ids) and original.failed == 0
    stub = run_repo_tests(Jail(tiny_ctx, local_sandbox), target, stubbed_source(task), ids)
    assert stub.passed == 0 and stub.failed == len(ids)


def test_a_broken_candidate_fails_every_selected_test(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    ids = node_ids(task.inputs)
    broken = run_repo_tests(Jail(tiny_ctx, local_sandbox), task.hidden.target, b"def (:\n", ids)
    assert broken.passed == 0 and broken.failed == len(ids)


def test_no_origins_no_run(tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox) -> None:
    task = tiny.task("tinypkg.core.clamp")
    assert run_repo_tests(Jail(tiny_ctx, local_sandbox), task.hidden.target, None, ()).selected == 0


def test_grade_reports_the_repo_tests_beside_the_reward(tiny: Tiny, tmp_path: Path) -> None:
    task = tiny.task("tinypkg.core.clamp")
    selected = len(node_ids(task.inputs))
    right = original_source(task).decode()
    wrong = "def clamp(value, low, high):\n    return value\n"
    verdicts = {}
    for name, text in (("right", right), ("wrong", wrong)):
        candidate = tmp_path / f"{name}.py"
        candidate.write_text(text)
        args = ["grade", "--tasks", str(tiny.batch_dir), "--task", task.id]
        done = run_cli(*args, "--candidate", str(candidate), "--repo-tests")
        assert done.returncode == 0, done.stderr[-2000:]
        verdicts[name] = Verdict.model_validate_json(done.stdout)
    good, wrong_verdict = verdicts["right"], verdicts["wrong"]
    assert good.reward == 1.0 and good.repo_tests is not None
    assert good.repo_tests.passed == good.repo_tests.selected == selected > 0
    assert wrong_verdict.repo_tests is not None and wrong_verdict.repo_tests.failed > 0
    assert wrong_verdict.reward is not None and wrong_verdict.reward < 1.0
    # reported only: the reward is the one grading without the flag gives
    args = ["grade", "--tasks", str(tiny.batch_dir), "--task", task.id]
    plain = run_cli(*args, "--candidate", str(tmp_path / "wrong.py"))
    unreported = Verdict.model_validate_json(plain.stdout)
    assert unreported.reward == wrong_verdict.reward and unreported.repo_tests is None


def test_only_a_graded_verdict_gets_the_tests_run(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    right = original_source(task).decode()
    base = {"task_id": task.id, "grader_version": "g", "reason": ""}
    violation = Verdict(reward=0.0, status="violation", **base)
    assert with_repo_tests(violation, task, right, Jail(tiny_ctx, local_sandbox)) is violation
    graded = Verdict(reward=1.0, status="graded", **base)
    counted = with_repo_tests(graded, task, right, Jail(tiny_ctx, local_sandbox))
    assert counted.repo_tests is not None and counted.repo_tests.passed > 0
    assert counted.reward == 1.0 and counted.status == "graded"
