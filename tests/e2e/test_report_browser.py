"""`replicate report`'s page opened in Debian's headless Chromium: it renders, and not blank.

The run is written by hand (rows of three tasks, two samples each, a counterexample and a
transcript), so the test needs no batch and stays well inside its 60 s bound."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from replicate import GRADER_VERSION
from replicate.core.records import Counterexample, ResultRow, StratumCount, Verdict
from replicate.scoring.report import write_report
from replicate.scoring.results import RESULTS_FILE, RUN_FILE

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1200,2000",
)


def _row(task: str, sample: int, reward: float, seconds: float) -> ResultRow:
    example = Counterexample(index=3, stratum="widened", call="f(-1)", expected="0", got="-1")
    verdict = Verdict(
        task_id=task,
        reward=reward,
        status="graded",
        reason="all hidden inputs match" if reward == 1.0 else "3 of 9 hidden inputs differ",
        raw_reward=reward,
        counts=(StratumCount(stratum="traced", total=9, matched=6),),
        counterexample=None if reward == 1.0 else example,
        grader_version=GRADER_VERSION,
    )
    return ResultRow(
        task_id=task,
        sample=sample,
        reward=reward,
        status="graded",
        reason=verdict.reason,
        agent_status="ok",
        agent_exit_code=0,
        duration_s=seconds,
        verdict=verdict,
    )


def _run_dir(root: Path) -> Path:
    rewards = {"pkg.a": (1.0, 0.0), "pkg.b": (0.4, 0.7), "pkg.c<i>": (0.0, 0.0)}
    rows = [
        _row(task, sample, reward, 1.5 + sample)
        for task, pair in rewards.items()
        for sample, reward in enumerate(pair)
    ]
    root.mkdir()
    (root / RESULTS_FILE).write_text("".join(r.model_dump_json() + "\n" for r in rows))
    run = {"tasks": str(root / "gone"), "agent": "builtin:openai", "sandbox": "local", "samples": 2}
    (root / RUN_FILE).write_text(json.dumps(run))
    transcript = root / "transcripts" / "pkg.b" / "0.json"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(json.dumps({"messages": [{"role": "user", "content": "<b>hi</b>"}]}))
    return root


def test_the_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: scripts/install.sh --dev installs it")
        pytest.skip("chromium is not installed (scripts/install.sh --dev installs it)")
    page = tmp_path / "report.html"
    write_report(_run_dir(tmp_path / "run"), page)
    shot = tmp_path / "shot.png"
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", f"--screenshot={shot}",
             page.as_uri()],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )  # fmt: skip
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    from PIL import Image  # matplotlib's own dependency

    with Image.open(shot) as image:
        assert image.size == (1200, 2000)
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is None or len(colours) > 50  # text, tables and plots: far from one colour
