"""Warm jailed runners: sandboxes started ahead of the candidate they will grade, one use each.

Process start is the floor of a grade: a fresh bubblewrap jail and interpreter cost
more than calling a function 500 times. A warm slot is a jail that is already running the
runner, blocked reading its job on stdin, with an empty per-slot file bound read-only over the
target's file. To grade, the candidate's source is written into that file (same inode, so the
bind shows it), the job is sent, and the runner imports the candidate only then. Each candidate
still gets its own jail — own PID namespace, own cgroup, own interpreter — and a slot is never
reused; a replacement is started in the background for the next candidate of the same file.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from replicate.sandbox import (
    SandboxRequest,
    SandboxResult,
    Started,
    StopWhen,
    WarmStart,
)
from replicate.scratch import make_dir, remove_dir

RequestFor = Callable[[Path], SandboxRequest]  # the request, given the slot's candidate file


@dataclass
class WarmJail:
    """One started jail and the host file bound over the target's file inside it."""

    started: Started
    candidate: Path
    scratch: Path
    after: Callable[[], None] | None = None  # once graded: start the replacement

    def run(
        self, source: bytes, stdin: bytes, timeout_s: float, stop: StopWhen | None = None
    ) -> SandboxResult:
        try:
            with self.candidate.open("r+b") as handle:  # same inode: the bind shows it
                handle.truncate(0)
                handle.write(source)
            return self.started.finish(stdin, timeout_s, stop)
        finally:
            remove_dir(self.scratch)

    def replace(self) -> None:
        """Start this slot's replacement (call once the grade's result is read: the start forks
        this process and loads a core, so it should not compete with the grade itself)."""
        after, self.after = self.after, None
        if after is not None:
            after()

    def discard(self) -> None:
        try:
            self.started.cancel()
        finally:
            remove_dir(self.scratch)


@dataclass(frozen=True)
class WarmStats:
    taken: int  # slots handed out
    ready: int  # of those, started before they were asked for (the warm path's gain)


def _discard(future: Future[WarmJail]) -> None:
    if future.exception() is None:
        future.result().discard()


class WarmPool:
    """Keeps up to `per_key` started slots for each key (repository tree + target file + ...)."""

    def __init__(
        self,
        sandbox: WarmStart,
        per_key: int = 1,
        max_slots: int = 8,
        *,
        refill: bool = True,
        starts: int | None = None,
    ) -> None:
        """`refill`: start a replacement whenever a slot is taken (a server, which cannot know
        what comes next); without it, slots start only when `fill` asks (`replicate run`, which
        knows which task its next grades are for).  `starts`: how many jails to start in all,
        when the caller knows how many it will take (mutants at gen time), so none is started
        only to be discarded at `close`."""
        self._sandbox = sandbox
        self._per_key = per_key
        self._refills = refill
        self._max_slots = max_slots
        self._ready: dict[Hashable, deque[Future[WarmJail]]] = {}
        self._lock = threading.Lock()
        self._starter = ThreadPoolExecutor(max_workers=2, thread_name_prefix="replicate-warm")
        self._closed = False
        self._taken = 0
        self._ready_taken = 0
        self._starts_left = starts

    def stats(self) -> WarmStats:
        with self._lock:
            return WarmStats(taken=self._taken, ready=self._ready_taken)

    def _counted(self) -> bool:
        """Whether one more jail may start (and count it); call under the lock."""
        if self._starts_left is None:
            return True
        if self._starts_left <= 0:
            return False
        self._starts_left -= 1
        return True

    def _start(self, request_for: RequestFor) -> WarmJail:
        scratch = make_dir("replicate-warm-")
        candidate = scratch / "candidate.py"
        candidate.write_bytes(b"")
        try:
            started = self._sandbox.start(request_for(candidate))
        except BaseException:
            remove_dir(scratch)
            raise
        return WarmJail(started, candidate, scratch)

    def take(self, key: Hashable, request_for: RequestFor) -> WarmJail:
        """A started slot for `key` (a fresh one when none is ready); a replacement is queued."""
        with self._lock:
            queue = self._ready.setdefault(key, deque())
            ready = queue.popleft() if queue else None
            self._taken += 1
            self._ready_taken += ready is not None
            if ready is None:
                self._counted()  # started here and now
        slot = ready.result() if ready is not None else self._start(request_for)
        if self._refills:
            slot.after = lambda: self._refill_now(key, request_for)
        return slot

    def fill(self, key: Hashable, request_for: RequestFor, up_to: int | None = None) -> None:
        """Start slots for `key` in the background, up to `per_key` (or `up_to`, when fewer
        will be taken: a JavaScript grade's one run) ready or starting."""
        self._refill_now(key, request_for, up_to)

    def _refill_now(self, key: Hashable, request_for: RequestFor, up_to: int | None = None) -> None:
        with self._lock:
            self._refill(key, self._ready.setdefault(key, deque()), request_for, up_to)

    def _refill(
        self,
        key: Hashable,
        queue: deque[Future[WarmJail]],
        request_for: RequestFor,
        up_to: int | None = None,
    ) -> None:
        if self._closed:
            return
        wanted = self._per_key if up_to is None else min(up_to, self._per_key)
        while len(queue) < wanted:
            if self._count() >= self._max_slots and not self._evict(key):
                return
            if not self._counted():
                return
            queue.append(self._starter.submit(self._start, request_for))

    def _evict(self, keep: Hashable) -> bool:
        """Discard the oldest slot of another key, to make room; False when there is none."""
        for key, queue in self._ready.items():
            if key != keep and queue:
                queue.popleft().add_done_callback(_discard)
                return True
        return False

    def _count(self) -> int:
        return sum(len(q) for q in self._ready.values())

    def close(self) -> None:
        """Cancel every slot nobody took."""
        with self._lock:
            self._closed = True
            pending = [f for q in self._ready.values() for f in q]
            self._ready.clear()
        self._starter.shutdown(wait=True)
        for future in pending:
            _discard(future)

    def __enter__(self) -> WarmPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
