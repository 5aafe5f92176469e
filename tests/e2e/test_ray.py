"""`--executor ray` on a real local Ray instance (started by the command, not local mode): the
repositories are minted in Ray's worker processes, and the batch is the local executor's, task
for task and byte for byte. Kept cheap: two small libraries, one task each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from replicate.gen.many.ledger import read_ledger

pytest.importorskip("ray")

SOURCES = ("pypi:idna==3.10", "pypi:tomli==2.0.1")


def gen(repos: Path, out: Path, *extra: str) -> tuple[int, dict[str, object]]:
    """Run `gen --repos` and return the driver's pid and the card it printed."""
    command = [sys.executable, "-m", "replicate", "gen", "--repos", str(repos), "--out", str(out)]
    process = subprocess.Popen(
        [*command, "--limit", "1", "--workers", "1", "--json", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stdout, stderr = process.communicate(timeout=1800)
    assert process.returncode == 0, stderr[-3000:]
    return process.pid, json.loads(stdout)


def files(batch: Path) -> dict[str, bytes]:
    """Every file of the tasks and snapshots (the manifest aside: it names the same files)."""
    return {
        path.relative_to(batch).as_posix(): path.read_bytes()
        for top in ("specs", "reference_impls")
        for path in sorted((batch / top).rglob("*"))
        if path.is_file() and path.name != "manifest.json"
    }


def test_ray_mints_in_worker_processes_the_batch_local_mints(tmp_path: Path) -> None:
    repos = tmp_path / "repos.txt"
    repos.write_text("\n".join(SOURCES) + "\n")
    local_pid, local_card = gen(repos, tmp_path / "local")
    ray_pid, ray_card = gen(repos, tmp_path / "ray", "--executor", "ray")

    local_workers = {o.worker for o in read_ledger(tmp_path / "local").values()}
    ray_workers = {o.worker for o in read_ledger(tmp_path / "ray").values()}
    assert {w.pid for w in local_workers if w} == {local_pid}  # positive control: in the driver
    assert ray_workers and all(w is not None and w.pid != ray_pid for w in ray_workers)

    assert ray_card["totals"] == {**local_card["totals"], "seconds": ray_card["totals"]["seconds"]}
    local_files, ray_files = files(tmp_path / "local"), files(tmp_path / "ray")
    assert sorted(local_files) == sorted(ray_files)
    assert any(name.startswith("specs/idna") for name in local_files)
    assert [n for n in local_files if local_files[n] != ray_files[n]] == []
