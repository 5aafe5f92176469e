"""`replicate gen --repos`: five public libraries (pinned sdists) and one source that fails set-up
on purpose, the minting killed with SIGKILL mid-way, resumed, and ending with the batch card.
Kept cheap: one task per library (--limit 1), small libraries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from replicate.batch.store import Batch
from replicate.gen.many.ledger import read_ledger
from tests.e2e.conftest import replicate

LIBRARIES = (
    "pypi:tomli==2.0.1",  # its sdist ships no tests: minted, with no task and a note saying why
    "pypi:idna==3.10",
    "pypi:markupsafe==3.0.2",
    "pypi:pluggy==1.5.0",
    "pypi:sortedcontainers==2.4.0",  # no tests in its sdist either
)
BROKEN = "./no-such-repository"
ARGS = ("--limit", "1", "--workers", "2", "--json")


def test_many_libraries_killed_resumed_and_carded(tmp_path: Path) -> None:
    repos = tmp_path / "repos.txt"
    repos.write_text("# five libraries and a typo\n" + "\n".join((*LIBRARIES, BROKEN)) + "\n")
    out = tmp_path / "batch"
    command = [sys.executable, "-m", "replicate", "gen", "--repos", str(repos), "--out", str(out)]
    first = subprocess.Popen([*command, *ARGS], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    minted = _wait_for_minted(out, first, 2)
    first.kill()  # SIGKILL: no clean-up of any kind
    first.wait()
    assert 2 <= len(minted) < len(LIBRARIES)  # mid-way

    done = replicate("gen", "--repos", str(repos), "--out", str(out), *ARGS)
    assert done.returncode == 0, done.stderr[-3000:]
    card = json.loads(done.stdout)
    assert set(card["skipped"]) >= minted  # what was minted before the kill is not minted again
    rows = {row["source"]: row for row in card["repositories"]}
    assert list(rows) == [*LIBRARIES, BROKEN]
    assert rows[BROKEN]["status"] == "failed"
    assert rows[BROKEN]["failure"].startswith("set-up: no such repository or directory")
    assert all(rows[name]["status"] == "minted" for name in LIBRARIES), card
    assert rows["pypi:idna==3.10"]["tasks"] == 1
    assert rows["pypi:idna==3.10"]["licence"]
    assert card["totals"]["minted"] == len(LIBRARIES)
    ledger = read_ledger(out)
    tasks = sorted(t for outcome in ledger.values() for t in outcome.tasks)
    assert card["totals"]["tasks"] == len(tasks) >= 3
    assert Batch.open(out).ids == tuple(tasks)  # the manifest covers all of them, nothing else
    text = (out / "CARD.md").read_text()
    assert f"{len(LIBRARIES)} of {len(LIBRARIES) + 1} repositories minted, 1 failed" in text


def _wait_for_minted(out: Path, process: subprocess.Popen[bytes], count: int) -> set[str]:
    deadline = time.monotonic() + 1200
    while time.monotonic() < deadline:
        minted = {s for s, o in read_ledger(out).items() if o.status == "minted"}
        if len(minted) >= count:
            return minted
        if process.poll() is not None:
            raise AssertionError(process.stderr.read().decode()[-3000:] if process.stderr else "")
        time.sleep(0.5)
    raise AssertionError(f"fewer than {count} repositories minted in time")


def test_a_pypi_source_is_one_commit_everywhere(tmp_path: Path) -> None:
    """The same sdist made a repository in two caches gives the same commit (a batch can be
    resumed, or re-minted on another machine, and recognised)."""
    from replicate.acquire import acquire

    one = acquire("pypi:tomli==2.0.1", None, tmp_path / "one")
    two = acquire("pypi:tomli==2.0.1", None, tmp_path / "two")
    assert one.commit == two.commit
    assert (one.key, one.url) == ("tomli-2.0.1", "pypi:tomli==2.0.1")
    assert os.path.isdir(one.git_dir)
