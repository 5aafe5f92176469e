"""A SIGUSR1 handler that raises `Interrupted`: for tests of when a pending Python signal
handler gets to run in the main thread (`replicate.executors.waiting`, the sandbox supervisors).
The `sigusr1_interrupts` fixture (tests/conftest.py) installs it for one test."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator


class Interrupted(Exception):
    pass


def _raise(signum: int, frame: object) -> None:
    raise Interrupted


def installed() -> Iterator[None]:
    previous = signal.signal(signal.SIGUSR1, _raise)
    yield
    signal.signal(signal.SIGUSR1, previous)


def signal_this_thread() -> None:
    """SIGUSR1 to the calling thread only: the main thread's wait is not interrupted by it."""
    signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)
