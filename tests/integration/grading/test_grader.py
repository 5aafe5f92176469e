"""Grading candidates for the tiny batch in the local sandbox: the verdict for each kind of text."""

from __future__ import annotations

import dataclasses
import time

import pytest

from replicate import GRADER_VERSION
from replicate.core.records import Verdict
from replicate.grading.grader import (
    Refusal,
    grade_text,
    original_source,
    run_candidate,
    stubbed_source,
)
from replicate.grading.reward import DEFAULT_WEIGHTS, normalise, raw_reward, score
from replicate.jail import Jail
from replicate.jail.calls import RepoContext
from replicate.sandbox.base import Sandbox, SandboxRequest, SandboxResult
from tests.integration.minted import SYMBOLS, Tiny

CLAMP = "tinypkg.core.clamp"


def _grade(tiny: Tiny, ctx: RepoContext, sandbox: Sandbox, symbol: str, text: str) -> Verdict:
    return grade_text(tiny.task(symbol), text, Jail(ctx, sandbox))


def _original(tiny: Tiny, symbol: str = CLAMP) -> str:
    return original_source(tiny.task(symbol)).decode()


@pytest.mark.parametrize("symbol", SYMBOLS)
def test_original_scores_one_and_stub_zero(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox, symbol: str
) -> None:
    task = tiny.task(symbol)
    right = grade_text(task, original_source(task).decode(), Jail(tiny_ctx, local_sandbox))
    assert (right.reward, right.status) == (1.0, "graded"), right.reason
    assert right.reason == f"all {len(task.inputs)} hidden inputs match"
    assert right.counterexample is None and right.task_id == task.id
    assert right.grader_version == GRADER_VERSION
    assert sum(c.matched for c in right.counts) == len(task.inputs)
    assert right.copy_share == 1.0 and right.copy_run  # the original is all original
    stub = grade_text(task, stubbed_source(task).decode(), Jail(tiny_ctx, local_sandbox))
    assert (stub.reward, stub.status) == (0.0, "graded")
    assert stub.copy_share == 0.0  # the stub has nothing of it
    assert stub.counterexample is not None and "NotImplementedError" in stub.counterexample.got


def test_stub_differs_from_original_only_in_the_body(tiny: Tiny) -> None:
    task = tiny.task(CLAMP)
    stub = stubbed_source(task).decode()
    assert "def clamp(value, low, high):\n" in stub
    assert '"""Clamp value into [low, high]."""\n    raise NotImplementedError\n' in stub
    assert "return low" not in stub and "def parse_int(text):" in stub


def test_candidate_that_does_not_parse(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    verdict = _grade(
        tiny, tiny_ctx, local_sandbox, CLAMP, "def clamp(value, low, high)\n    return\n"
    )
    assert (verdict.reward, verdict.status) == (0.0, "graded")
    assert "does not parse" in verdict.reason


def test_candidate_lacking_the_target(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    verdict = _grade(tiny, tiny_ctx, local_sandbox, CLAMP, "def other(x):\n    return x\n")
    assert (verdict.reward, verdict.status) == (0.0, "graded")
    assert "clamp" in verdict.reason and verdict.reason.startswith("candidate rejected")
    assert verdict.copy_share is None and verdict.copy_run is None  # no body to compare
    assert '"copy": null' in verdict.model_dump_json(indent=1)


def test_bare_def_completion_of_a_method(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    text = "def add(self, amount):\n    self.total += amount\n    return self.total\n"
    verdict = _grade(tiny, tiny_ctx, local_sandbox, "tinypkg.core.Counter.add", text)
    assert (verdict.reward, verdict.status) == (1.0, "graded"), verdict.reason


def test_fenced_completion_with_an_import(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    text = (
        "Here you go:\n```python\nimport itertools\n\n"
        "def evens(limit):\n    yield from itertools.islice(range(limit), 0, None, 2)\n```\n"
    )
    verdict = _grade(tiny, tiny_ctx, local_sandbox, "tinypkg.core.evens", text)
    assert verdict.reward == 1.0, verdict.reason


def test_partly_wrong_candidate_gets_counts_and_counterexample(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    text = "def clamp(value, low, high):\n    return min(value, high)\n"
    task = tiny.task(CLAMP)
    verdict = _grade(tiny, tiny_ctx, local_sandbox, CLAMP, text)
    counts = {c.stratum: (c.total, c.matched) for c in verdict.counts}
    assert counts["traced"] == (4, 3) and set(counts) >= {"traced", "widened", "edge"}
    total = sum(c.total for c in verdict.counts)
    wrong = total - sum(c.matched for c in verdict.counts)
    assert (
        total == len(task.inputs) and verdict.reason == f"{wrong} of {total} hidden inputs differ"
    )
    assert verdict.raw_reward == round(raw_reward(verdict.counts, DEFAULT_WEIGHTS), 6)
    baseline = task.hidden.baseline
    assert baseline is not None and 0.0 <= baseline.raw_reward < 1.0
    plain = [p.raw_reward for p in baseline.programs if not p.program.startswith("visible")]
    assert max(plain) <= 0.5 and baseline.raw_reward >= max(plain)  # what mint allows
    assert abs(verdict.reward - normalise(verdict.raw_reward, baseline.raw_reward)) < 1e-5
    assert 0.0 < verdict.reward < verdict.raw_reward < 1.0
    example = verdict.counterexample
    assert example is not None and example.shrunk_from is None  # a traced input: not shrunk
    assert (example.index, example.call, example.expected, example.got) == (
        1,
        "clamp(-3, 0, 10)",
        "0",
        "-3",
    )


def test_degenerate_candidates_score_zero(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    for body in ("return None", "return value", "raise ValueError", "return 0"):
        text = f"def clamp(value, low, high):\n    {body}\n"
        verdict = _grade(tiny, tiny_ctx, local_sandbox, CLAMP, text)
        assert verdict.reward == 0.0 and verdict.status == "graded", (body, verdict)
        assert verdict.raw_reward is not None and verdict.raw_reward <= 0.5


def test_wrong_exception_type(tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox) -> None:
    text = "def parse_int(text):\n    return int(text.strip() or 'x', 10)\n"
    verdict = _grade(tiny, tiny_ctx, local_sandbox, "tinypkg.core.parse_int", text)
    assert verdict.reward == 1.0  # int() raises ValueError too: the type is what counts
    lookalike = (
        "class ValueError(Exception):\n    pass\n\n"
        "def parse_int(text):\n    raise ValueError('no')\n"
    )
    whole = _original(tiny, "tinypkg.core.parse_int") + "\n\n" + lookalike
    verdict = _grade(tiny, tiny_ctx, local_sandbox, "tinypkg.core.parse_int", whole)
    assert verdict.reward == 0.0


def test_candidate_raising_at_import(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    whole = _original(tiny) + "\nraise RuntimeError('boom at import')\n"
    verdict = _grade(tiny, tiny_ctx, local_sandbox, CLAMP, whole)
    assert (verdict.reward, verdict.status) == (0.0, "graded")
    assert "fails to import" in verdict.reason and "boom at import" in verdict.reason


def test_candidate_exiting_at_import_is_graded_not_infra(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    whole = "import os\n" + _original(tiny) + "\nos._exit(0)\n"
    verdict = _grade(tiny, tiny_ctx, local_sandbox, CLAMP, whole)
    assert (verdict.reward, verdict.status) == (0.0, "graded")
    assert "died while importing" in verdict.reason


def test_candidate_exiting_at_call(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    text = "import os\n\ndef clamp(value, low, high):\n    os._exit(0)\n"
    verdict = _grade(tiny, tiny_ctx, local_sandbox, CLAMP, text)
    assert (verdict.reward, verdict.status) == (0.0, "graded")
    total = len(tiny.task(CLAMP).inputs)
    assert verdict.reason == f"{total} of {total} hidden inputs differ"


def test_candidate_sleeping_forever(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    full = tiny.task(CLAMP)
    task = dataclasses.replace(full, inputs=full.inputs[:2])  # two calls are enough, and faster
    text = "import time\n\ndef clamp(value, low, high):\n    while True:\n        time.sleep(60)\n"
    started = time.monotonic()
    verdict = grade_text(task, text, Jail(tiny_ctx, local_sandbox))
    took = time.monotonic() - started
    assert (verdict.reward, verdict.status) == (0.0, "graded")
    assert verdict.reason == "2 of 2 hidden inputs differ"
    assert verdict.counterexample is not None and verdict.counterexample.detail == "timeout"
    assert took < task.hidden.grading.total_timeout_s + 5
    assert took < len(task.inputs) * task.hidden.grading.call_timeout_s + 5


def test_candidate_ignoring_alarms_is_stopped_by_the_total_limit(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    task = tiny.task(CLAMP)
    grading = task.hidden.grading.model_copy(update={"total_timeout_s": 2.0})
    short = dataclasses.replace(task, hidden=task.hidden.model_copy(update={"grading": grading}))
    text = (
        "import signal\n\ndef clamp(value, low, high):\n"
        "    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n    while True:\n        pass\n"
    )
    started = time.monotonic()
    verdict = grade_text(short, text, Jail(tiny_ctx, local_sandbox))
    assert time.monotonic() - started < 2.0 + 5
    assert (verdict.reward, verdict.status) == (0.0, "graded")


class _BrokenSandbox:
    """A sandbox whose process never starts: no channel, an error on stderr."""

    name = "broken"
    isolated = True

    def __init__(self) -> None:
        self.requests: list[SandboxRequest] = []

    def run(self, request: SandboxRequest) -> SandboxResult:
        self.requests.append(request)
        return SandboxResult(
            exit_code=1, timed_out=False, duration_s=0.0, stderr=b"bwrap: cannot start\n"
        )


def test_infra_error_when_the_sandbox_cannot_start(tiny: Tiny, tiny_ctx: RepoContext) -> None:
    sandbox = _BrokenSandbox()
    verdict = grade_text(tiny.task(CLAMP), _original(tiny), Jail(tiny_ctx, sandbox))
    assert verdict.status == "infra_error" and verdict.reward is None
    assert "bwrap: cannot start" in verdict.reason
    request = sandbox.requests[0]
    assert request.channel and request.env["PYTHONHASHSEED"] == "0"
    assert request.timeout_s == tiny.task(CLAMP).hidden.grading.total_timeout_s


def test_the_candidate_never_sees_expected_outputs(tiny: Tiny, tiny_ctx: RepoContext) -> None:
    sandbox = _BrokenSandbox()
    task = tiny.task("tinypkg.core.parse_int")
    grade_text(task, _original(tiny, "tinypkg.core.parse_int"), Jail(tiny_ctx, sandbox))
    request = sandbox.requests[0]
    assert b"not an integer" not in request.stdin  # expected messages stay on the trusted side
    mounted = {m.source for m in request.mounts}
    assert not any("expected" in m or str(tiny.batch_dir / "specs") in m for m in mounted)


COIN_FLIP = """
import os

def clamp(value, low, high):
    if os.urandom(1)[0] % 4 == 0:
        return value
    return max(low, min(value, high))
"""


def test_a_coin_flip_earns_nothing(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    """Catalogue 17: random answers win passes on one run (positive control), not a reward."""
    task = tiny.task(CLAMP)
    found = run_candidate(task, COIN_FLIP, Jail(tiny_ctx, local_sandbox))
    assert not isinstance(found, Refusal)
    once = score(task.inputs, task.expected, found.run.parsed.outcomes, task.hidden.grading)
    baseline = task.hidden.baseline
    assert baseline is not None and normalise(once.reward, baseline.raw_reward) > 0.1
    verdict = _grade(tiny, tiny_ctx, local_sandbox, CLAMP, COIN_FLIP)
    assert verdict.reward == 0.0 and verdict.status == "graded", verdict
    assert verdict.reason.startswith("nondeterministic: ")


def test_a_deterministic_partial_candidate_keeps_its_reward_when_graded_twice(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    text = "def clamp(value, low, high):\n    return min(value, high)\n"
    rewards = {_grade(tiny, tiny_ctx, local_sandbox, CLAMP, text).reward for _ in range(3)}
    assert len(rewards) == 1 and 0.0 < rewards.pop() < 1.0  # type: ignore[operator]
