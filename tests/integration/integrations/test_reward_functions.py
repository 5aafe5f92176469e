"""The exported rows, read back with `datasets`, graded by each framework's reward function called
the way that framework calls it: the original scores 1.0, the stub 0.0, as `grade_text` says."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path
from typing import Any

import pytest

from replicate.grading.grader import grade_text
from replicate.integrations import openrlhf, trl, verl
from replicate.integrations.grading import TASKS_ENV, Grader, completion_text, grader_for
from replicate.jail import Jail
from replicate.jail.calls import RepoContext
from replicate.sandbox.base import Sandbox
from tests.integration.integrations.rows import candidates, export_rows
from tests.integration.minted import Tiny

SYMBOLS = ("tinypkg.core.clamp", "tinypkg.core.Counter.add")
EXPECTED = {"whole_file": 1.0, "fenced_def": 1.0, "bare_def": 1.0, "stub": 0.0}
COPY = EXPECTED  # the original's body, whole: all of it is the original; the stub, none


@pytest.fixture(scope="module")
def rows(tiny: Tiny, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    datasets = pytest.importorskip("datasets")
    args = [arg for symbol in SYMBOLS for arg in ("--task", symbol)]
    out = export_rows(tiny, tmp_path_factory.mktemp("rewards") / "rows", *args)
    return list(datasets.load_dataset("parquet", data_files=str(out), split="train"))


def _cases(tiny: Tiny, rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str, str]]:
    return [
        (row, kind, text)
        for row in rows
        for kind, text in candidates(tiny.batch.load(row["task_id"])).items()
    ]


def test_verl_compute_score(tiny: Tiny, rows: list[dict[str, Any]]) -> None:
    forks = grader_for(Path(rows[0]["extra_info"]["tasks_dir"])).forks
    assert forks is not None
    before = forks.served
    for row, kind, text in _cases(tiny, rows):
        result = verl.compute_score(
            data_source=row["data_source"],
            solution_str=text,
            ground_truth=row["reward_model"]["ground_truth"],
            extra_info=row["extra_info"],
        )
        shared = result.pop("copy_run")
        want = {"score": EXPECTED[kind], "infra_error": False, "copy": COPY[kind]}
        assert result == want, (row["task_id"], kind)
        assert isinstance(shared, float) and (shared > 0 or kind == "stub"), shared
    # graded as children of sealed sessions: every candidate run there, none in a jail started
    # for it (one session per task file for first runs, one for the determinism check's)
    served = forks.served - before
    assert served >= len(_cases(tiny, rows)), served
    assert forks.started <= 2 * len(SYMBOLS), forks.started


def test_trl_reward_func_text_and_chat(tiny: Tiny, rows: list[dict[str, Any]]) -> None:
    cases = _cases(tiny, rows)
    chat = [[{"role": "assistant", "content": text}] for _, _, text in cases]
    for completions in ([text for _, _, text in cases], chat):
        kept = [row for row, _, _ in cases]
        rewards = trl.reward_func(
            prompts=[row["prompt"] for row in kept],
            completions=completions,
            completion_ids=[[0] for _ in kept],
            data_source=[row["data_source"] for row in kept],
            ability=[row["ability"] for row in kept],
            reward_model=[row["reward_model"] for row in kept],
            extra_info=[row["extra_info"] for row in kept],
            task_id=[row["task_id"] for row in kept],
        )
        assert rewards == [EXPECTED[kind] for _, kind, _ in cases]


def test_openrlhf_reward_func(
    tiny: Tiny, rows: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TASKS_ENV, str(tiny.batch_dir))
    cases = _cases(tiny, rows)
    prompts = [row["prompt"][0]["content"] + "\n<|assistant|>\n" for row, _, _ in cases]
    result = openrlhf.reward_func(
        queries=[prompt + text for prompt, (_, _, text) in zip(prompts, cases, strict=True)],
        prompts=prompts,
        labels=[row["task_id"] for row, _, _ in cases],
    )
    assert set(result) == {"rewards", "scores", "extra_logs"}
    assert list(result["rewards"]) == [EXPECTED[kind] for _, kind, _ in cases]
    assert list(result["scores"]) == list(result["rewards"])
    assert list(result["extra_logs"]["infra_error"]) == [0.0] * len(cases)
    assert list(result["extra_logs"]["copy"]) == [COPY[kind] for _, kind, _ in cases]
    assert len(result["extra_logs"]["copy_run"]) == len(cases)


def test_rewards_equal_grade_text(
    tiny: Tiny, tiny_ctx: RepoContext, local_sandbox: Sandbox, rows: list[dict[str, Any]]
) -> None:
    wrong = "```python\ndef clamp(value, low, high):\n    return min(value, high)\n```"
    row = next(r for r in rows if r["extra_info"]["symbol"] == SYMBOLS[0])
    for text in (wrong, "def clamp(:", "no code at all"):
        direct = grade_text(tiny.batch.load(row["task_id"]), text, Jail(tiny_ctx, local_sandbox))
        got = verl.compute_score(row["data_source"], text, row["task_id"], row["extra_info"])
        assert got["score"] == direct.reward


def test_unknown_task_and_no_batch_are_loud(tiny: Tiny, monkeypatch: pytest.MonkeyPatch) -> None:
    from replicate.errors import ReplicateError

    info = {"tasks_dir": str(tiny.batch_dir)}
    with pytest.raises(ReplicateError, match="unknown task id"):
        verl.compute_score("replicate", "x", "no-such-task", info)
    monkeypatch.delenv(TASKS_ENV, raising=False)
    with pytest.raises(ReplicateError, match=TASKS_ENV):
        verl.compute_score("replicate", "x", "no-such-task", None)


def test_completion_text_forms() -> None:
    assert completion_text("abc") == "abc"
    assert completion_text({"role": "assistant", "content": "x"}) == "x"
    chat = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    assert completion_text(chat) == "a"
    assert completion_text([{"role": "user", "content": "only"}]) == "only"
    assert completion_text(None) == ""


def test_nothing_happens_at_import(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.integration.minted import REPO_ROOT

    code = (
        "import sys, replicate.integrations.verl, replicate.integrations.trl, "
        "replicate.integrations.openrlhf, replicate.integrations.grading as g; "
        "assert not g._GRADERS; "
        "assert 'pyarrow' not in sys.modules and 'torch' not in sys.modules"
    )
    env = {"PYTHONPATH": str(REPO_ROOT), "REPLICATE_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "cache").exists()


def test_an_infrastructure_failure_is_not_a_zero() -> None:
    from replicate.integrations.grading import infra_verdict, reward_of

    assert reward_of(infra_verdict("t", "sandbox gone")) is None


_PARENT: list[Grader] = []  # the parent's grader, as a forked child inherits it


def _score_in_child(row: dict[str, Any], text: str) -> tuple[float, bool, bool]:
    """In a forked child: the score, whether the parent's grader (inherited) still has a live
    session, and whether the child's grader is another one."""
    (parent,) = _PARENT
    alive = any(session.thread.is_alive() for _, session in parent.forks._idle)  # type: ignore[union-attr]
    score = verl.compute_score(row["data_source"], text, row["task_id"], row["extra_info"])
    mine = grader_for(Path(row["extra_info"]["tasks_dir"]))
    return score["score"], alive, mine is not parent


def test_a_forked_child_grades_with_its_own_sessions(
    tiny: Tiny, rows: list[dict[str, Any]]
) -> None:
    """A trainer's data workers are often forked from the process that graded: the parent's
    sessions are served by threads the child does not have (the control: none is alive in the
    child), so the child opens its own, and the parent's go on serving the parent."""
    row = next(r for r in rows if r["extra_info"]["symbol"] == SYMBOLS[0])
    text = candidates(tiny.batch.load(row["task_id"]))["whole_file"]
    first = verl.compute_score(row["data_source"], text, row["task_id"], row["extra_info"])
    assert (first["score"], first["infra_error"]) == (1.0, False)
    parent = grader_for(Path(row["extra_info"]["tasks_dir"]))
    assert parent.forks is not None and parent.forks._idle  # sessions the child inherits
    _PARENT[:] = [parent]
    started = time.monotonic()
    with multiprocessing.get_context("fork").Pool(1) as pool:
        score, alive, other = pool.apply(_score_in_child, (row, text))
    assert (score, alive, other) == (1.0, False, True)
    assert (
        time.monotonic() - started < tiny.batch.load(row["task_id"]).hidden.grading.total_timeout_s
    )
    served = parent.forks.served
    assert (
        verl.compute_score(row["data_source"], text, row["task_id"], row["extra_info"])["score"]
        == 1.0
    )
    assert parent.forks.served == served + 2  # the parent's sessions, untouched by the child
