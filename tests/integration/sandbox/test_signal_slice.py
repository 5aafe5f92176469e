"""A supervisor in the main thread lets a pending signal handler run while its process runs.

The signal is sent to a helper thread (`pthread_kill`), as the kernel may deliver a SIGTERM
meant for the process to any thread: Python's flag is set, but the main thread's `select` is
not woken.  The sandboxed command marks a file when it ends; the question is whether the
handler ran before that.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from replicate.sandbox import SandboxRequest, get_sandbox, process
from tests.interrupts import Interrupted, signal_this_thread


def _signal_from_a_helper_thread() -> None:
    def send() -> None:
        time.sleep(0.5)  # the main thread is in its supervisor's `select` by now
        signal_this_thread()

    threading.Thread(target=send, daemon=True).start()


def _ended_before_the_handler_ran(tmp_path: Path, run_s: float) -> bool:
    """Run `sleep run_s` then mark a file, in the plain sandbox from this (the main) thread."""
    ended = tmp_path / "ended"
    request = SandboxRequest(
        argv=("sh", "-c", f'sleep {run_s} && touch "{ended}"'),
        env={"PATH": os.environ["PATH"]},
        cwd=str(tmp_path),
        timeout_s=120,
    )
    _signal_from_a_helper_thread()
    try:
        get_sandbox("plain").run(request)
        time.sleep(0.5)  # the handler runs at the first bytecode after the run at the latest
    except Interrupted:
        return ended.exists()
    raise AssertionError("the handler never ran")


def test_one_long_select_holds_the_handler_back_until_the_process_ends(
    sigusr1_interrupts: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The positive control: one `select` up to the deadline sleeps through the signal."""
    monkeypatch.setattr(process, "WAIT_SLICE_S", 120.0)
    assert _ended_before_the_handler_ran(tmp_path, run_s=2)


def test_a_sliced_select_lets_the_handler_run_while_the_process_runs(
    sigusr1_interrupts: None, tmp_path: Path
) -> None:
    assert not _ended_before_the_handler_ran(tmp_path, run_s=60)
