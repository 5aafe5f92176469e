"""A long `replicate run` killed with SIGKILL mid-flight and resumed: every (task, sample) is
graded exactly once.

The batch joins the two real libraries CI mints (more-itertools 10.5.0, boltons 24.1.0) and the
bundled sample library's fresh mint (so that at least 200 tasks are there whatever boltons'
`--limit` leaves); `run --limit 200 --samples 2 --workers 2` with an agent that does nothing is
killed once a fifth of its rows are written, while agents and grading are in flight, then run
again to the end. The agent writes nothing, so every attempt is graded 0.0: an attempt that the
resume repeated, or lost, shows in the rows.
"""

from __future__ import annotations

import collections
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replicate.batch.store import Batch
from replicate.gen.many.merge import merge_repo
from tests.e2e.conftest import Demo, Minted, replicate
from tests.e2e.test_public_libraries import read_rows

TASKS = 200
SAMPLES = 2
KILL_AT = TASKS * SAMPLES // 5  # rows written when the run is killed


@pytest.fixture(scope="module")
def joined(
    more_itertools: Minted, boltons: Minted, demo: Demo, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """One batch of the three (merged as `gen --repos` merges each repository's batch)."""
    batch = tmp_path_factory.mktemp("joined") / "batch"
    shutil.copytree(more_itertools.batch, batch, symlinks=True)
    for other in (boltons.batch, demo.out / "batch"):
        (repo,) = Batch.open(other).repos()
        staged = batch.parent / f"staged-{repo.record.key}"
        shutil.copytree(other, staged, symlinks=True)
        merge_repo(batch, staged, repo.record.key)
    return batch


def _argv(batch: Path, run: Path) -> list[str]:
    return [
        sys.executable, "-m", "replicate", "run", "--tasks", str(batch), "--agent", "true",
        "--out", str(run), "--limit", str(TASKS), "--samples", str(SAMPLES), "--workers", "2",
    ]  # fmt: skip


def _rows(run: Path) -> int:
    results = run / "results.jsonl"
    return results.read_bytes().count(b"\n") if results.is_file() else 0


def test_a_killed_run_resumes_with_every_attempt_graded_once(joined: Path, tmp_path: Path) -> None:
    batch = Batch.open(joined)
    repos = collections.Counter(i.split("__")[0] for i in sorted(batch.ids)[:TASKS])
    assert len(batch.ids) >= TASKS and len(repos) >= 2, repos  # two real libraries at least
    run = tmp_path / "run"
    proc = subprocess.Popen(
        _argv(joined, run),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 900
    while _rows(run) < KILL_AT and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)  # the run's own process, as `kill -9` would
    proc.wait(timeout=30)
    killed_at = _rows(run)
    # the positive control: the kill left attempts undone
    assert KILL_AT <= killed_at < TASKS * SAMPLES, (killed_at, proc.stderr.read()[-2000:])
    done = subprocess.run(_argv(joined, run), capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = read_rows(run)
    keys = collections.Counter((r.task_id, r.sample) for r in rows)
    assert len(keys) == TASKS * SAMPLES and set(keys.values()) == {1}, keys.most_common(3)
    assert {s for _, s in keys} == set(range(SAMPLES))
    odd = [r for r in rows if (r.reward, r.status, r.agent_status) != (0.0, "graded", "ok")]
    assert not odd, "\n".join(f"{r.task_id}#{r.sample}: {r.reward} {r.reason}" for r in odd[:5])
    before = (run / "results.jsonl").read_bytes()
    again = replicate(*_argv(joined, run)[3:], timeout=600)  # resume: nothing left to do
    assert again.returncode == 0, again.stderr[-2000:]
    assert (run / "results.jsonl").read_bytes() == before
