"""`replicate run --agent builtin:openai-single --samples K` in a subprocess against a local
chat-completions server: one row per (task, sample), pass@k in --json, and a resume."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.integration.agents.fake_chat import Answer, serve, text
from tests.integration.agents.test_llm_agent import CLAMP, SINGLE_REPLY
from tests.integration.minted import Tiny

WRONG_REPLY = "```python\ndef clamp(value, low, high):\n    return value\n```\n"


def test_samples_give_one_row_each_and_pass_at_k(tiny: Tiny, tmp_path: Path) -> None:
    counter = itertools.count()
    lock = threading.Lock()

    def script(request: dict[str, Any]) -> Answer:
        with lock:
            index = next(counter)
        return text(WRONG_REPLY if index == 1 else SINGLE_REPLY)  # right, wrong, right

    out = tmp_path / "run"
    with serve(script) as chat:
        args = ("--tasks", str(tiny.batch_dir), "--out", str(out), "--task", CLAMP)
        args += ("--agent", "builtin:openai-single", "--model", "fake", "--base-url", chat.url)
        args += ("--allow-host", "127.0.0.1", "--samples", "3", "--workers", "1", "--json")
        env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
        done = subprocess.run(
            [sys.executable, "-m", "replicate", "run", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        summary = json.loads(done.stdout)
        again = subprocess.run(
            [sys.executable, "-m", "replicate", "run", *args[:-1]],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
    assert len(chat.requests) == 3  # the resume asked the model nothing
    assert [(r["sample"], r["reward"] == 1.0) for r in summary["rows"]] == [
        (0, True),
        (1, False),
        (2, True),
    ]
    assert all(r["prompt_tokens"] == 100 and r["completion_tokens"] == 20 for r in summary["rows"])
    (task,) = summary["tasks"]
    assert (task["attempts"], task["successes"]) == (3, 2)
    assert task["pass_at_k"] == {"1": pytest.approx(2 / 3), "2": 1.0, "3": 1.0}
    assert summary["pass_at_k"] == task["pass_at_k"] and summary["samples"] == 3
    assert sorted(p.name for p in (out / "transcripts" / tiny.id_of(CLAMP)).iterdir()) == [
        "0.json",
        "1.json",
        "2.json",
    ]
    assert again.returncode == 0, again.stderr[-3000:]
    assert "pass@3" in again.stderr and "3 attempt(s) kept" in again.stderr
    assert "tokens in+out" in again.stderr and "100+20" in again.stderr and "#2" in again.stderr
