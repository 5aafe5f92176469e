"""A `--repos` child process from both ends: the parent runs `python -m MODULE JOB RESULT`
within a time budget (its process group stopped when the budget runs out) and reads the result
back; the child dies with its parent.

The parent holds the child's stdin open and never writes to it: end of file there means the
parent died (even by SIGKILL), and the child then kills its own process group, the processes
it started with it (pip, git), so that a killed `gen --repos` leaves nothing running."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from pydantic import BaseModel

from replicate import scratch

TERM_GRACE_S = 10.0  # between SIGTERM (scratch cleaned) and SIGKILL
_TELLING = re.compile(r"^(Fatal Python error|([a-z_]\w*\.)*[A-Z]\w*: )")  # `pkg.mod.Name: ...`
Job = TypeVar("Job", bound=BaseModel)


class Result(Protocol):
    error: str | None

    def model_dump_json(self) -> str: ...


@dataclass(frozen=True)
class Ended:
    """How a child ended: its result's JSON text (None when it wrote none), else why not
    (`out_of_time`, or its exit `code` and the end of its stderr)."""

    report: str | None
    out_of_time: bool = False
    code: int = 0
    log_tail: str = ""


def run_child(module: str, job: BaseModel, tmp: Path, budget_s: float | None) -> Ended:
    """Run `python -m module JOB.json RESULT.json` in `tmp`, killed after `budget_s` seconds."""
    spec, report = tmp / "job.json", tmp / "result.json"
    spec.write_text(job.model_dump_json(), encoding="utf-8")
    command = [sys.executable, "-m", module, str(spec), str(report)]
    with (tmp / "stderr.log").open("w+", encoding="utf-8", errors="replace") as log:
        process = subprocess.Popen(  # stdin: held open, never written (see die_with_parent)
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
        try:
            process.wait(timeout=budget_s)
        except subprocess.TimeoutExpired:
            _stop(process)
            return Ended(None, out_of_time=True)
        finally:
            _stop(process)
            if process.stdin is not None:
                process.stdin.close()
        log.seek(0)
        tail = log.read()[-2000:]
    try:
        return Ended(report.read_text(encoding="utf-8"))
    except OSError:
        return Ended(None, code=process.returncode, log_tail=tail)


def crash_reason(code: int, log: str, doing: str = "gen") -> str:
    """One line: how the child (`doing`) ended, and the line of its stderr that says most."""
    how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    telling = [line for line in lines if _TELLING.match(line)]
    said = (telling or lines or [""])[-1]
    return f"{doing} crashed ({how})" + (f": {said}" if said else "")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the child's process group (its scratch removed), SIGKILL it if it lingers."""
    if process.poll() is not None:
        return
    for sig, grace in ((signal.SIGTERM, TERM_GRACE_S), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def die_with_parent() -> None:
    """In the child: kill this process group when stdin reaches its end (the parent is gone)."""

    def watch() -> None:
        while os.read(0, 1 << 16):  # the raw fd: no buffer lock held at interpreter shutdown
            continue
        os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def internal_error(exc: Exception) -> str:
    """In the child: a bug's one-line account (its traceback goes to stderr, the log's end)."""
    traceback.print_exc()
    first = str(exc).splitlines()[0] if str(exc) else ""
    return f"internal error: {type(exc).__name__}: {first}"


def child_main(argv: list[str], job_type: type[Job], run: Callable[[Job], Result]) -> int:
    """The child's end of `run_child`: read the job, run it, write the result."""
    job = job_type.model_validate_json(Path(argv[0]).read_text(encoding="utf-8"))
    die_with_parent()
    scratch.install_signal_cleanup()
    result = run(job)
    Path(argv[1]).write_text(result.model_dump_json(), encoding="utf-8")
    return 0 if result.error is None else 2
