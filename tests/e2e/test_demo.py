"""`bash scripts/demo.sh`: install, mint corpus/samplelib, score the example agent, print rewards.

The prepared attempts (examples/attempts) are some right, some partly right and some wrong, so the
reward table must show the range of the reward: a 1.000, something strictly between 0 and 1, and
something at or near 0.
"""

from __future__ import annotations

import re

from replicate.core.records import ResultRow
from tests.e2e.conftest import REPO_ROOT, Demo

REWARD = re.compile(r"-?\d+\.\d{3}")


def table_rewards(output: str) -> list[float]:
    """The reward column of the run table (rich box drawing: `│ target │ reward │ status │ ...`)."""
    rewards = []
    for line in output.splitlines():
        cells = [cell.strip() for cell in line.split("│")]
        if len(cells) >= 7 and cells[3] in ("graded", "violation") and REWARD.fullmatch(cells[2]):
            rewards.append(float(cells[2]))
    return rewards


def test_demo_shows_the_range_of_the_reward(demo: Demo) -> None:
    out, done = demo.out, demo.done
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "mean reward" in output, output[-4000:]
    rewards = table_rewards(output)
    attempts = sorted((REPO_ROOT / "examples" / "attempts").glob("*.py"))
    assert len(rewards) == len(attempts) >= 3, output[-4000:]
    assert any(r == 1.0 for r in rewards), rewards
    assert any(0.0 < r < 1.0 for r in rewards), rewards
    assert any(r < 0.5 for r in rewards), rewards
    # The table is the run's record: one graded row per attempt, with the same rewards.
    lines = (out / "run" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [ResultRow.model_validate_json(line) for line in lines]
    assert all(row.status == "graded" and row.agent_status == "ok" for row in rows), rows
    assert sorted(round(row.reward or 0.0, 3) for row in rows) == sorted(rewards)
    assert (out / "batch" / "specs").is_dir()
