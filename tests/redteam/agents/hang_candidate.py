"""Catalogue item 11, candidate side: ignore SIGALRM and SIGTERM.

Modes: loop (an endless loop on every call), slow (a correct answer, given only after sleeping
past the per-call limit with SIGALRM ignored, on the first few calls), slow-plain (the same
without ignoring SIGALRM: the baseline a per-call limit stops).  Arguments after a slow mode: the
sleep in the sandbox (seconds; the test picks it past the task's limit plus the host clock's
slack; outside one it is 0.5 s) and how many of the first calls sleep (the others answer at once).
"""

from __future__ import annotations

import _common
import correct

IGNORE = """
import signal
signal.signal(signal.SIGALRM, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
"""
LOOP = "while True:\n    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"


def main() -> None:
    mode, *rest = _common.args()
    if mode == "loop":
        _common.override(IGNORE + LOOP, head=IGNORE)
        return
    seconds, calls = rest
    head, slow = _common.slow_first_calls(float(seconds), int(calls))
    ignore = IGNORE if mode == "slow" else ""
    body = ignore + slow + correct.body(_common.target_name())
    _common.override(body, head=head + ignore)


if __name__ == "__main__":
    main()
