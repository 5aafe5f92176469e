"""Grading through a warm pool gives the verdict a cold grade gives (only the start moves)."""

from __future__ import annotations

from replicate.grading.grader import grade_text, original_source, stubbed_source
from replicate.jail import Jail
from replicate.jail.calls import RepoContext
from replicate.jail.warm import WarmPool
from replicate.sandbox.base import Sandbox, WarmStart
from tests.integration.minted import Tiny

WRONG = "def clamp(value, low, high):\n    return max(low, value)\n"


def test_warm_verdicts_equal_cold(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    assert isinstance(local_sandbox, WarmStart)
    task = tiny.task("tinypkg.core.clamp")
    texts = [original_source(task).decode(), stubbed_source(task).decode(), WRONG, "def (:"]
    cold = [grade_text(task, t, Jail(tiny_ctx, local_sandbox)) for t in texts]
    with WarmPool(local_sandbox, per_key=2) as pool:
        warm = [grade_text(task, t, Jail(tiny_ctx, local_sandbox, pool)) for t in texts]
    assert [v.reward for v in cold] == [1.0, 0.0, cold[2].reward, 0.0]
    assert cold[2].reason != cold[0].reason  # some hidden inputs differ
    assert [(v.reward, v.status, v.reason) for v in warm] == [
        (v.reward, v.status, v.reason) for v in cold
    ]
