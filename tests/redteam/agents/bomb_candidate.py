"""Catalogue item 12, candidate side: resource bombs at grade time.

Modes: fork (a fork storm whose children sleep), memory (allocate until refused, and hold it),
flood (endless output on stdout, stderr and the results channel), huge (a ten-million-item
always-equal list), deep (a 200,000-deep JSON line on the results channel, with and without the
nonce read from memory, then C-level recursion past the stack in `json.loads`).  With
REDTEAM_SAFE=1 in the environment (only outside a sandbox) each bomb stays small; even without
it, the fork storm (at most ~1,900 processes) and the memory bomb (4 GB) have a ceiling above
the jail's limits, so a missing limit fails the test instead of taking the machine down.
"""

from __future__ import annotations

import _common

BODIES = {
    "fork": """
import os, time
safe = os.environ.get("REDTEAM_SAFE") == "1"
width, depth = (8, 1) if safe else (12, 3)
level = spawned = 0
while level < depth and spawned < width:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        level, spawned = level + 1, 0
    else:
        spawned += 1
time.sleep(120 if safe else 3600)
return None
""",
    "memory": """
import os
safe = os.environ.get("REDTEAM_SAFE") == "1"
if safe and os.environ.get("RT_ALLOCATED"):
    return None
hog = []
try:
    while len(hog) < (18 if safe else 64):
        hog.append(b"\\x01" * (64 << 20))
        print("ALLOCATED_MB", 64 * len(hog), flush=True)
except MemoryError:
    pass
os.environ["RT_ALLOCATED"] = "1"
while not safe:
    pass
return None
""",
    "flood": """
import os
safe = os.environ.get("REDTEAM_SAFE") == "1"
chunk = b"PASS " * 13000 + b"\\n"
written = 0
while not safe or written < (12 << 20):
    for fd in (1, 2, 3):
        try:
            written += os.write(fd, chunk)
        except OSError:
            pass
return None
""",
    "huge": "return _RtHuge([0] * 10_000_000)",
    "deep": """
import gc, os, sys
nonces = [""]
for obj in gc.get_objects():
    if isinstance(obj, dict) and isinstance(obj.get("nonce"), str):
        nonces.append(obj["nonce"])
deep = "[" * 200_000 + "]" * 200_000
for nonce in nonces:
    try:
        os.write(3, ((nonce + " " if nonce else "") + deep + "\\n").encode())
    except OSError:
        pass
import json
sys.setrecursionlimit(10**8)
return json.loads("[" * 5_000_000 + "]" * 5_000_000)
""",
}
HUGE = """
class _RtHuge(list):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__
"""


def main() -> None:
    (mode,) = _common.args()
    _common.override(BODIES[mode], HUGE if mode == "huge" else "")


if __name__ == "__main__":
    main()
