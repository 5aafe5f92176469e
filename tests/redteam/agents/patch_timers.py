"""Catalogue item 5: a correct candidate, too slow on a few calls, that patches the timers meant
to stop it.

Modes: stdlib (patch `signal` and `time` functions), runner (patch the grading process's own
module-level timer names and clocks through `__main__`), nopatch (the slow candidate alone: the
baseline that the time limit stops).  Arguments after the mode: the sleep in the sandbox
(seconds; the test picks it past the task's limit plus the host clock's slack; outside one it is
0.5 s) and how many of the first calls sleep (the others answer at once).
"""

from __future__ import annotations

import _common
import correct

STDLIB = """
import signal as _rt_signal
import time as _rt_time

_rt_signal.setitimer = lambda *args, **kwargs: (0.0, 0.0)
_rt_signal.alarm = lambda *args, **kwargs: 0
_rt_signal.signal = lambda *args, **kwargs: None
_rt_time.perf_counter = lambda: 0.0
_rt_time.monotonic = lambda: 0.0
"""
RUNNER = """
import sys as _rt_sys
import types as _rt_types

_rt_main = _rt_sys.modules["__main__"]
_rt_fake_signal = _rt_types.SimpleNamespace(
    **{k: getattr(__import__("signal"), k) for k in dir(__import__("signal")) if k.isupper()}
)
_rt_fake_signal.setitimer = lambda *args, **kwargs: (0.0, 0.0)
_rt_fake_signal.signal = lambda *args, **kwargs: None
for _rt_name in ("_setitimer", "_signal"):
    if hasattr(_rt_main, _rt_name):
        setattr(_rt_main, _rt_name, lambda *args, **kwargs: (0.0, 0.0))
if hasattr(_rt_main, "_perf"):
    _rt_main._perf = lambda: 0.0
if hasattr(_rt_main, "signal"):
    _rt_main.signal = _rt_fake_signal
"""


def main() -> None:
    mode, seconds, calls = _common.args()
    patch = {"stdlib": STDLIB, "runner": RUNNER, "nopatch": ""}[mode]
    head, slow = _common.slow_first_calls(float(seconds), int(calls))
    _common.override(slow + correct.body(_common.target_name()), head=head + patch)


if __name__ == "__main__":
    main()
