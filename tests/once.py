"""Work done once per test run, however many pytest-xdist workers share it (`scripts/test.sh`
runs the suite in several): pytest-xdist's documented pattern.  The first worker to ask does the
work under a file lock, in a folder beside the workers' own temporary folders, and writes down
its JSON record; every other worker waits on the lock and reads the record back.  Without xdist
the work is done in the session's temporary folder, as before.

What the work leaves in its folder is shared by every worker at once: a test must never write
into it (copy it first)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

FAILED = "failed"  # the record of work that raised: the other workers fail with its reason


def once(
    factory: pytest.TempPathFactory, name: str, work: Callable[[Path], dict[str, Any]]
) -> dict[str, Any]:
    """`work(folder)`'s JSON record, the work done once per test run in an empty `folder`."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return work(factory.mktemp(name))
    shared = factory.getbasetemp().parent / "shared"
    shared.mkdir(exist_ok=True)
    record = shared / f"{name}.json"
    with FileLock(str(shared / f"{name}.lock")):
        if not record.is_file():
            _do(work, shared / name, record)
    done: dict[str, Any] = json.loads(record.read_text(encoding="utf-8"))
    if FAILED in done:
        pytest.fail(f"{name}, made once for every worker, failed on another: {done[FAILED]}")
    return done


def _do(work: Callable[[Path], dict[str, Any]], folder: Path, record: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)  # left by a worker that died at it
    folder.mkdir()
    try:
        done = work(folder)
    except BaseException as exc:
        record.write_text(json.dumps({FAILED: str(exc)[-3000:]}), encoding="utf-8")
        raise
    record.write_text(json.dumps(done), encoding="utf-8")
