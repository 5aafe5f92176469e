"""RUN_DIR bookkeeping: `run.json` (what the run is), append-only `results.jsonl`, and the lock
that keeps a second `replicate run` out of a RUN_DIR while one is using it."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from pathlib import Path

from filelock import FileLock, Timeout
from pydantic import ValidationError

from replicate import jsonl
from replicate.core import ResultRow
from replicate.errors import ReplicateError

RUN_FILE = "run.json"
RESULTS_FILE = "results.jsonl"
TORN_FILE = "results.torn.jsonl"  # lines of results.jsonl that were cut short or do not parse
LOCK_FILE = ".run.lock"
OWNER_FILE = ".run.owner"  # the pid of the process holding the lock, for the refusal message
DONE_STATUSES = ("graded", "violation")


@dataclass(frozen=True)
class RunIdentity:
    """What must not change between a run and its resumption."""

    tasks: str
    agent: str
    sandbox: str
    samples: int


@contextmanager
def locked_run_dir(out: Path) -> Iterator[None]:
    """Create RUN_DIR and hold its lock for the block; a second run on it is refused at once."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReplicateError(f"cannot use {out} as a run directory: {exc.strerror}") from None
    lock = FileLock(out / LOCK_FILE, blocking=False)
    try:
        lock.acquire()
    except Timeout:
        raise ReplicateError(
            f"{out} is in use by another `replicate run` (pid {_owner(out)}); wait for it to "
            "end, or use another --out"
        ) from None
    owner = out / OWNER_FILE
    try:
        owner.write_text(f"{os.getpid()}\n", encoding="utf-8")
        yield
    finally:
        with suppress(OSError):
            owner.unlink()
        lock.release()


def _owner(out: Path) -> str:
    try:
        return (out / OWNER_FILE).read_text(encoding="utf-8").strip() or "unknown"
    except OSError:
        return "unknown"


def claim_run_dir(out: Path, identity: RunIdentity) -> None:
    """Check that RUN_DIR is new or belongs to the same run (resume), else refuse."""
    path = out / RUN_FILE
    if not path.exists():
        path.write_text(json.dumps(asdict(identity), indent=2) + "\n", encoding="utf-8")
        return
    try:
        old = RunIdentity(**json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, TypeError):
        raise ReplicateError(f"{path} is not a run record; choose another --out") from None
    for field, now in asdict(identity).items():
        before = getattr(old, field)
        if before != now:
            raise ReplicateError(
                f"{out} holds a run with a different {field} ({before!r}, now {now!r}); "
                "use another --out to start a new run"
            )


def repair_results(out: Path) -> int:
    """Move every line of results.jsonl that is not a whole row (a crash cut it short) to
    results.torn.jsonl, so strict JSONL readers can read the file; returns how many moved."""
    path = out / RESULTS_FILE
    if not path.exists():
        return 0
    data = path.read_bytes()
    kept: list[str] = []
    torn: list[str] = []
    for line in jsonl.split(data.decode("utf-8", errors="surrogateescape")):
        if not line.strip():
            continue
        try:
            jsonl.parse_model(ResultRow, line)
        except (ValidationError, UnicodeEncodeError):
            torn.append(line)
            continue
        kept.append(line)
    if not torn and (not data or data.endswith(b"\n")):
        return 0
    with (out / TORN_FILE).open("ab") as aside:
        aside.write(_encoded(torn))
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(_encoded(kept))
    tmp.replace(path)
    return len(torn)


def _encoded(lines: list[str]) -> bytes:
    """Lines read back to their bytes (an undecodable byte of a torn line kept as it was)."""
    return "".join(line + "\n" for line in lines).encode("utf-8", errors="surrogateescape")


def load_rows(out: Path) -> dict[tuple[str, int], ResultRow]:
    """The last row per (task, sample); `repair_results` first, so every line is a row."""
    rows: dict[tuple[str, int], ResultRow] = {}
    path = out / RESULTS_FILE
    if not path.exists():
        return rows
    for line in jsonl.split(path.read_text(encoding="utf-8")):
        row = jsonl.parse_model(ResultRow, line)
        rows[(row.task_id, row.sample)] = row
    return rows


class ResultLog:
    """Appends rows to results.jsonl, one whole line at a time, from many threads."""

    def __init__(self, out: Path) -> None:
        self._path = out / RESULTS_FILE
        self._lock = threading.Lock()

    def append(self, rows: Iterable[ResultRow]) -> None:
        """Whole lines only (the file was repaired when the run took RUN_DIR)."""
        text = "".join(jsonl.model_line(row) for row in rows)
        with self._lock, self._path.open("ab") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
