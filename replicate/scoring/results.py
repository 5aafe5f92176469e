"""RUN_DIR bookkeeping: `run.json` (what the run is) and append-only `results.jsonl`."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from pydantic import ValidationError

from replicate.core.records import ResultRow
from replicate.errors import ReplicateError

RUN_FILE = "run.json"
RESULTS_FILE = "results.jsonl"
DONE_STATUSES = ("graded", "violation")


@dataclass(frozen=True)
class RunIdentity:
    """What must not change between a run and its resumption."""

    tasks: str
    agent: str
    sandbox: str
    samples: int


def claim_run_dir(out: Path, identity: RunIdentity) -> None:
    """Create RUN_DIR or check that it belongs to the same run (resume), else refuse."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReplicateError(f"cannot use {out} as a run directory: {exc.strerror}") from None
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


def load_rows(out: Path) -> dict[tuple[str, int], ResultRow]:
    """The last row per (task, sample); lines cut short by a crash are skipped."""
    rows: dict[tuple[str, int], ResultRow] = {}
    path = out / RESULTS_FILE
    if not path.exists():
        return rows
    # A crash can cut the last line inside a multi-byte character: decode leniently, skip it.
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = ResultRow.model_validate_json(line)
        except ValidationError:
            continue
        rows[(row.task_id, row.sample)] = row
    return rows


class ResultLog:
    """Appends rows to results.jsonl, one whole line at a time, from many threads."""

    def __init__(self, out: Path) -> None:
        self._path = out / RESULTS_FILE
        self._lock = threading.Lock()

    def append(self, rows: Iterable[ResultRow]) -> None:
        text = "".join(row.model_dump_json() + "\n" for row in rows)
        with self._lock, self._path.open("a+b") as handle:
            if handle.tell() > 0:  # a line cut short by a crash must not swallow this row
                handle.seek(-1, 2)
                if handle.read(1) != b"\n":
                    text = "\n" + text
            handle.write(text.encode("utf-8"))
            handle.flush()
