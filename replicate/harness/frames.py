"""The runner's frames, read on the trusted side: the host end of the results channel.

The runner (`runner.py`, in the jail) writes one line per event to fd 3: `<nonce> <json>`, where
the JSON object has an ``event`` (``started``, ``ready``, ``loaded``, ``import_error``,
``result``, ``done``) and, for a result, the input index ``i`` and its tagged ``outcome``.  The
channel is untrusted (the candidate shares the runner's process and may write to it), so a line
without the run's nonce, malformed JSON, a frame of the wrong shape and a second result for an
index are rejected, never fatal.  Comparing outcomes is `replicate.verifiers.compare`'s work.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

_STATUSES = frozenset({"returned", "raised", "timeout", "load_error", "runner_error"})


@dataclass(frozen=True)
class ParsedRun:
    """What one runner process reported on its channel."""

    ready: bool
    import_error: str | None
    outcomes: Mapping[int, Mapping[str, Any]]
    done: bool
    rejected_frames: int = 0
    started: bool = False  # the runner ran, before any repository or candidate code



def collect_frames(frames: Iterable[Mapping[str, Any] | None]) -> ParsedRun:
    """A run from its parsed frames (None: a line that was not one of ours)."""
    ready = done = started = False
    import_error: str | None = None
    outcomes: dict[int, Mapping[str, Any]] = {}
    rejected = 0
    for parsed in frames:
        frame = parsed or {}
        event = frame.get("event")
        if event == "started":
            started = True
        elif event == "ready":
            ready = True
        elif event == "done":
            done = True
        elif event == "loaded":
            pass
        elif event == "import_error" and import_error is None and _is_import_error(frame):
            import_error = f"{frame['type']}: {frame['msg']}"
        elif event == "result" and is_result(frame) and frame["i"] not in outcomes:
            outcomes[frame["i"]] = frame["outcome"]
        else:
            rejected += 1
    return ParsedRun(ready, import_error, MappingProxyType(outcomes), done, rejected, started)


def read_frame(line: bytes, prefix: bytes) -> dict[str, Any] | None:
    """The JSON object of one channel line that starts with `prefix` (the nonce), else None."""
    if not line.startswith(prefix):
        return None
    try:
        text = line[len(prefix) :].decode("utf-8").strip(_JSON_SPACE)
        frame, end = _SCAN(text, 0)  # json.loads without its Python-level wrapping (a third
    except (UnicodeDecodeError, ValueError, RecursionError, StopIteration):  # of a grade's parse)
        return None
    return frame if type(frame) is dict and end == len(text) else None


_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_JSON_SPACE = " \t\n\r"


def _is_import_error(frame: Any) -> bool:
    return type(frame.get("type")) is str and type(frame.get("msg")) is str


def is_result(frame: Any) -> bool:
    """Whether a ``result`` frame has an input index and a well-formed outcome."""
    outcome = frame.get("outcome")
    return (
        type(frame.get("i")) is int and type(outcome) is dict and outcome.get("status") in _STATUSES
    )
