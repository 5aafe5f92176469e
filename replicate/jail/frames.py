"""The runner's frames, read on the trusted side: the host end of the results channel.

The runner (`replicate/jail/runner/`, in the jail) writes one line per event to fd 3:
`<nonce> <json>`, where
the JSON object (a `wire.Frame`) has an ``event`` (``started``, ``ready``, ``loaded``,
``import_error``, ``result``, ``done``) and, for a result, the input index ``i`` and its
``outcome`` (a `wire.Outcome`).  The
channel is untrusted (the candidate shares the runner's process and may write to it), so a line
without the run's nonce, malformed JSON, a frame of the wrong shape and a second result for an
index are rejected, never fatal.  Comparing outcomes is `replicate.grading.compare`'s work.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, cast

from replicate.jail import wire
from replicate.jail.known_outcomes import KNOWN


@dataclass(frozen=True)
class ParsedRun:
    """What one runner process reported on its channel."""

    ready: bool
    import_error: str | None
    outcomes: Mapping[int, wire.Outcome]
    done: bool
    rejected_frames: int = 0
    started: bool = False  # the runner ran, before any repository or candidate code


def collect_frames(frames: Iterable[wire.Frame | None]) -> ParsedRun:
    """A run from its parsed frames (None: a line that was not one of ours)."""
    ready = done = started = False
    import_error: str | None = None
    outcomes: dict[int, wire.Outcome] = {}
    rejected = 0
    for parsed in frames:
        frame: wire.Frame = parsed or {}
        event = frame.get("event")
        if event == wire.STARTED:
            started = True
        elif event == wire.READY:
            ready = True
        elif event == wire.DONE:
            done = True
        elif event == wire.LOADED:
            pass
        elif event == wire.IMPORT_ERROR and import_error is None and _is_import_error(frame):
            import_error = f"{frame['type']}: {frame['msg']}"
        elif event == wire.RESULT and is_result(frame) and frame["i"] not in outcomes:
            outcomes[frame["i"]] = frame["outcome"]
        else:
            rejected += 1
    return ParsedRun(ready, import_error, MappingProxyType(outcomes), done, rejected, started)


def read_frame(line: bytes, prefix: bytes) -> wire.Frame | None:
    """The JSON object of one channel line that starts with `prefix` (the nonce), else None: a
    frame only in name until `collect_frames` has checked its shape."""
    if not line.startswith(prefix):
        return None
    return KNOWN.read(line, len(prefix), lambda: _decoded(line, len(prefix)))


def _decoded(line: bytes, start: int) -> wire.Frame | None:
    try:
        text = line[start:].decode("utf-8").strip(_JSON_SPACE)
        frame, end = _SCAN(text, 0)  # json.loads without its Python-level wrapping (a third
    except (UnicodeDecodeError, ValueError, RecursionError, StopIteration):  # of a grade's parse)
        return None
    return cast("wire.Frame", frame) if type(frame) is dict and end == len(text) else None


_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_JSON_SPACE = " \t\n\r"


def _is_import_error(frame: wire.Frame) -> bool:
    return type(frame.get("type")) is str and type(frame.get("msg")) is str


def is_result(frame: wire.Frame) -> bool:
    """Whether a ``result`` frame has an input index and a well-formed outcome."""
    outcome = frame.get("outcome")
    well_formed = type(outcome) is dict and outcome.get("status") in wire.STATUSES
    return type(frame.get("i")) is int and well_formed
