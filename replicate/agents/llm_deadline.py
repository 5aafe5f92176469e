"""One deadline per model request that no retry, backoff or slow answer can stretch.

The `openai` client bounds each try by a timeout, but a read timeout restarts on every byte
(a server that sends its headers and then a byte a second is never timed out) and every retry
starts a new timeout (four retries of a request that never answers held an attempt five times
its `--timeout`).  So:

- `within` runs the request (the client's retries and backoff included) on a thread of its own
  and waits no longer than the attempt has left; then it closes the client under the request,
  which ends it at its socket's next wake, and leaves the thread to finish alone.
- `http_client` is the client's own default HTTP client, whose transport gives up on a body
  that has been arriving for `RATE_GRACE_S` slower than `MIN_BYTES_PER_S` (a read timeout the
  client retries, inside the same deadline).
"""

from __future__ import annotations

import functools
import importlib
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")
MIN_BYTES_PER_S = 256.0
RATE_GRACE_S = 10.0


class DeadlinePassed(Exception):
    """The work did not end within its time; it was abandoned."""


def within(seconds: float, work: Callable[[], T], abandon: Callable[[], None]) -> T:
    """`work()`'s result or exception, if it ends within `seconds`; else `abandon()` is called
    and DeadlinePassed raised, the work's thread (a daemon) left to end on its own."""
    box: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()

    def run() -> None:
        try:
            box.put((True, work()))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box.put((False, exc))

    threading.Thread(target=run, name="replicate-model-request", daemon=True).start()
    try:
        ok, value = box.get(timeout=max(0.0, seconds))
    except queue.Empty:
        abandon()
        raise DeadlinePassed(f"no answer within {seconds:.1f} s") from None
    if ok:
        return value
    raise value


def http_client(openai: Any) -> Any:
    """The `openai` module's default HTTP client (httpx2 for the clients that use it, else
    httpx), with the transfer-rate floor on its transport."""
    if hasattr(openai, "DefaultHttpx2Client"):
        lib, make = importlib.import_module("httpx2"), openai.DefaultHttpx2Client
    else:
        lib, make = importlib.import_module("httpx"), openai.DefaultHttpxClient
    return make(transport=_floored_transport(lib)(lib.HTTPTransport()))


@functools.cache
def _floored_transport(lib: Any) -> Any:
    """A transport class of `lib` whose responses' bodies must keep to the rate floor."""

    class Trickle(lib.SyncByteStream):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def __iter__(self) -> Iterator[bytes]:
            first: float | None = None
            size = 0
            for chunk in self._inner:
                now = time.monotonic()
                first = now if first is None else first
                size += len(chunk)
                if now - first > RATE_GRACE_S and size / (now - first) < MIN_BYTES_PER_S:
                    raise lib.ReadTimeout(
                        f"the answer arrives at {size / (now - first):.0f} bytes/s "
                        f"(under {MIN_BYTES_PER_S:g})"
                    )
                yield chunk

        def close(self) -> None:
            self._inner.close()

    class Floored(lib.BaseTransport):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def handle_request(self, request: Any) -> Any:
            response = self._inner.handle_request(request)
            response.stream = Trickle(response.stream)
            return response

        def close(self) -> None:
            self._inner.close()

    return Floored
