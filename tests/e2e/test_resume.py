"""A long `gen` can be watched and resumed, on the bundled sample library (`--limit`: a few tasks).

One uninterrupted mint is the reference. A second mint into another folder is killed with SIGKILL
once it has written a few tasks, stopped by `--budget`, then resumed; it must end with the same
tasks, byte for byte, as the uninterrupted one, having redone none of what it had decided.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from replicate.batch.manifest import MANIFEST
from replicate.batch.minting import MARK
from replicate.batch.store import Batch
from replicate.gen.ledger import LEDGER, read_entries
from tests.e2e.conftest import REPO_ROOT, replicate
from tests.e2e.test_bundled_batch import _without_timing

LIMIT = "6"
GEN = ("gen", "--repo", "corpus/samplelib", "--limit", LIMIT, "--workers", "2", "--json")
KILL_AT = 2  # tasks in the ledger when the second mint is killed


def _files(batch: Path) -> dict[str, Any]:
    """Batch-relative path -> sha256 of every file of the batch's two halves; what depends on the
    clock left out: the time limits of a hidden task.json (set from the reference's measured run
    time) and, in the manifest, the hashes of those files."""
    found: dict[str, Any] = {}
    for top in ("specs", "reference_impls"):
        for path in sorted((batch / top).rglob("*")):
            if path.is_file() and not path.is_symlink():
                rel = path.relative_to(batch).as_posix()
                found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
                if _timed(rel):
                    found[rel] = _without_timing(path)
    manifest = json.loads((batch / MANIFEST).read_text(encoding="utf-8"))
    found[MANIFEST] = {k: v for k, v in manifest["files"].items() if not _timed(k)}
    return found


def _timed(rel: str) -> bool:
    parts = rel.split("/")
    return len(parts) == 3 and parts[0] == "reference_impls" and parts[2] == "task.json"


def _funnel(stdout: str) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(stdout)
    payload.pop("duration_s")  # the one field that depends on the clock
    return payload


def _kill_after_tasks(out: Path, tasks: int) -> int:
    """Start a mint into `out`, SIGKILL it (and its jails) once the ledger holds `tasks` tasks;
    the number of targets the ledger held then."""
    with subprocess.Popen(
        [sys.executable, "-m", "replicate", *GEN, "--out", str(out)],
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    ) as proc:
        deadline = time.monotonic() + 900
        try:
            while sum(e.kept for e in _entries(out)) < tasks:
                assert proc.poll() is None, "gen ended before it could be killed"
                assert time.monotonic() < deadline, "gen wrote no task in 900 s"
                time.sleep(0.01)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return len(_entries(out))


def _entries(out: Path) -> list[Any]:
    return read_entries(out) if (out / LEDGER).is_file() else []


@pytest.fixture(scope="module")
def whole(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = tmp_path_factory.mktemp("whole") / "batch"
    done = replicate(*GEN, "--out", str(out), cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return out, done


def test_off_a_terminal_gen_writes_plain_progress_lines(
    whole: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    lines = whole[1].stderr.splitlines()
    minting = [line for line in lines if "computing golden outputs" in line]
    assert minting and all(line.startswith("[") and " s] " in line for line in minting)
    assert any(" of 88 done" in line and "tasks so far" in line for line in minting)
    assert not any("\x1b[" in line for line in lines)  # no terminal control codes


def test_a_killed_mint_stopped_by_its_budget_then_resumed_ends_as_an_uninterrupted_one(
    whole: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    reference, done = whole
    out = tmp_path / "batch"
    decided = _kill_after_tasks(out, KILL_AT)
    # positive control: killed, the batch lacks decisions, and readers say it is unfinished
    # (tasks are often decided in a burst: the kill may land after the last task's files but
    # before the rest of the targets are decided)
    written = sorted((out / "specs").glob("*/task.json"))
    assert KILL_AT <= len(written) <= int(LIMIT) and (out / MARK).is_file()
    assert decided < len(_entries(reference))
    refused = replicate("validate", "--tasks", str(out), cwd=REPO_ROOT)
    assert refused.returncode == 2 and "has not finished this batch" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    unverified = Batch.open(out, verify=False)  # --no-verify: the tasks written so far load
    assert [unverified.load(i).id for i in unverified.ids] == [p.parent.name for p in written]

    # the budget is spent before minting starts: nothing new is minted, the batch is whole
    stopped = replicate(*GEN, "--out", str(out), "--budget", "1", cwd=REPO_ROOT)
    assert stopped.returncode == 0, stopped.stderr[-3000:]
    notes = json.loads(stopped.stdout)["setup_notes"]
    budget = [n for n in notes if n.startswith("stopped at the time budget: ")]
    assert budget and int(budget[0].split(": ")[1].split()[0]) > 0, notes
    assert f"resumed: {decided} target(s)" in stopped.stderr
    assert not (out / MARK).exists() and len(_entries(out)) == decided
    checked = replicate("validate", "--tasks", str(out), "--json", cwd=REPO_ROOT)
    assert checked.returncode == 0 and json.loads(checked.stdout)["ok"]

    resumed = replicate(*GEN, "--out", str(out), cwd=REPO_ROOT)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    # the resume redid none of the targets decided before the kill ...
    assert f"resumed: {decided} target(s) decided by an earlier run" in resumed.stderr
    assert len(_entries(out)) == len(_entries(reference))
    # ... and ends with the uninterrupted mint's funnel and files, byte for byte
    assert _funnel(resumed.stdout) == _funnel(done.stdout)
    assert _files(out) == _files(reference)
    assert not (out / MARK).exists()
