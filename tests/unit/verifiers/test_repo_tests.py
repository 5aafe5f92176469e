"""The repository's own tests as an extra signal: pristine file passes, a stub fails them."""

from __future__ import annotations

from replicate.harness.jail import RepoContext
from replicate.harness.sandbox.base import Sandbox
from replicate.verifiers.grader import original_source, stubbed_source
from replicate.verifiers.repo_tests import node_ids, run_repo_tests
from tests.unit.minted import Tiny


def test_selected_tests_pass_on_the_original_and_fail_on_the_stub(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    ids = node_ids(task.inputs)
    assert ids and all("::" in i for i in ids)
    target = task.hidden.target
    original = run_repo_tests(tiny_ctx, target, original_source(task), ids, local_sandbox)
    assert original.selected == len(ids) and original.passed == len(ids) and original.failed == 0
    stub = run_repo_tests(tiny_ctx, target, stubbed_source(task), ids, local_sandbox)
    assert stub.passed == 0 and stub.failed == len(ids) and stub.pass_rate == 0.0


def test_a_broken_candidate_fails_every_selected_test(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    ids = node_ids(task.inputs)
    broken = run_repo_tests(tiny_ctx, task.hidden.target, b"def (:\n", ids, local_sandbox)
    assert broken.passed == 0 and broken.failed == len(ids)


def test_no_origins_no_run(tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox) -> None:
    task = tiny.task("tinypkg.core.clamp")
    assert run_repo_tests(tiny_ctx, task.hidden.target, None, (), local_sandbox).selected == 0
