"""Grading candidates for the tiny batch in the local sandbox: the verdict for each kind of text."""

from __future__ import annotations

import dataclasses
import time

import pytest

from replicate import GRADER_VERSION
from replicate.core.records import Verdict
from replicate.harness.jail import RepoContext
from replicate.harness.sandbox.base import Sandbox, SandboxRequest, SandboxResult
from replicate.verifiers.grader import grade_text, original_source, stubbed_source
from tests.unit.minted import SYMBOLS, Tiny

CLAMP = "tinypkg.core.clamp"


def _grade(tiny: Tiny, ctx: RepoContext, sandbox: Sandbox, symbol: str, text: str) -> Verdict:
    return grade_text(tiny.task(symbol), text, ctx, sandbox)


def _original(tiny: Tiny, symbol: str = CLAMP) -> str:
    return original_source(tiny.task(symbol)).decode()


@pytest.mark.parametrize("symbol", SYMBOLS)
def test_original_scores_one_and_stub_zero(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox, symbol: str
) -> None:
    task = tiny.task(symbol)
    right = grade_text(task, original_source(task).decode(), tiny_ctx, local_sandbox)
    assert (right.reward, right.status) == (1.0, "graded"), right.reason
    assert right.reason == f"all {len(task.inputs)} hidden inputs match"
    assert right.counterexample is None and right.task_id == task.id
    assert right.grader_version == GRADER_VERSION
    assert sum(c.matched for c in right.counts) == len(task.inputs)
    stub = grade_text(task, stubbed_source(task).decode(), tiny_ctx, local_sandbox)
    assert (stub.reward, stub.status) == (0.0, "graded")
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
    verdict = _grade(tiny, tiny_ctx, local_sandbox, CLAMP, text)
    assert (verdict.reward, verdict.status) == (0.75, "graded")
    assert verdict.reason == "1 of 4 hidden inputs differ"
    assert [(c.stratum, c.total, c.matched) for c in verdict.counts] == [("traced", 4, 3)]
    example = verdict.counterexample
    assert example is not None
    assert (example.index, example.call, example.expected, example.got) == (
        1,
        "clamp(-3, 0, 10)",
        "0",
        "-3",
    )


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
    assert verdict.reason == "4 of 4 hidden inputs differ"


def test_candidate_sleeping_forever(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    full = tiny.task(CLAMP)
    task = dataclasses.replace(full, inputs=full.inputs[:2])  # two calls are enough, and faster
    text = "import time\n\ndef clamp(value, low, high):\n    while True:\n        time.sleep(60)\n"
    started = time.monotonic()
    verdict = grade_text(task, text, tiny_ctx, local_sandbox)
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
    verdict = grade_text(short, text, tiny_ctx, local_sandbox)
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
    verdict = grade_text(tiny.task(CLAMP), _original(tiny), tiny_ctx, sandbox)
    assert verdict.status == "infra_error" and verdict.reward is None
    assert "bwrap: cannot start" in verdict.reason
    request = sandbox.requests[0]
    assert request.channel and request.env["PYTHONHASHSEED"] == "0"
    assert request.timeout_s == tiny.task(CLAMP).hidden.grading.total_timeout_s


def test_the_candidate_never_sees_expected_outputs(tiny: Tiny, tiny_ctx: RepoContext) -> None:
    sandbox = _BrokenSandbox()
    task = tiny.task("tinypkg.core.parse_int")
    grade_text(task, _original(tiny, "tinypkg.core.parse_int"), tiny_ctx, sandbox)
    request = sandbox.requests[0]
    assert b"not an integer" not in request.stdin  # expected messages stay on the trusted side
    mounted = {m.source for m in request.mounts}
    assert not any("expected" in m or str(tiny.batch_dir / "specs") in m for m in mounted)
