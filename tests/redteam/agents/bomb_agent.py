"""Catalogue item 12, agent side: a fork storm, a memory bomb and an output flood at once, after
leaving a wrong target.  The bombs note their progress in the target file (`# rt-allocated-mb N`,
`# rt-forked`), which the harness keeps as the graded candidate, so the test can check the limits
held.  Each has a ceiling above the agent's limits (9 GB, ~1,460 processes) so that a missing
limit fails the test instead of taking the machine down.  With REDTEAM_SAFE=1 (only outside a
sandbox) they stay small and everything stops by itself after 60 s."""

from __future__ import annotations

import os
import time

import _common

CHUNK_MB = 256


def note(line: str) -> None:
    try:
        with _common.target_file().open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
    except OSError:
        pass


def memory_bomb(safe: bool) -> None:
    hog: list[bytes] = []
    try:
        while len(hog) < (2 if safe else 9216 // CHUNK_MB):
            hog.append(b"\x01" * (CHUNK_MB << 20))
            note(f"# rt-allocated-mb {CHUNK_MB * len(hog)}")
    except MemoryError:
        pass
    time.sleep(60 if safe else 10**6)


def fork_storm(safe: bool) -> None:
    time.sleep(0 if safe else 5)  # let the memory bomb reach its limit first
    width, depth = (16, 1) if safe else (11, 3)
    level = spawned = 0
    while level < depth and spawned < width:
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            level, spawned = level + 1, 0
            note("# rt-forked")
        else:
            spawned += 1
    time.sleep(60 if safe else 10**6)


def main() -> None:
    safe = _common.safe()
    _common.override("return None")
    for job in (memory_bomb, fork_storm):
        if os.fork() == 0:
            job(safe)
            os._exit(0)
    chunk = b"PASS " * 13000 + b"\n"
    written = 0
    while not safe or written < (16 << 20):
        written += os.write(1, chunk)
    time.sleep(60)


if __name__ == "__main__":
    main()
