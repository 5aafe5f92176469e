"""The recording plugin's output read back: each target's calls, drops and counts, and the
chosen classes' call sequences (`call_sequences.read_sequences`)."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from replicate import jsonl
from replicate.core import CallSequence, ClassRef, Target
from replicate.harvest.call_sequences import read_sequences


@dataclass(frozen=True)
class HarvestedCall:
    pickle_b64: str
    origin: str
    rebuilt: bool = False  # `self` did not pickle: the input builds it afresh from its class call
    ctor_b64: str = ""  # a method's: the pickled class call that built `self`, when recorded
    visible: bool = True  # made from test code or a doctest (the agent can read it)


@dataclass(frozen=True)
class TargetStats:
    """What the recorder saw of one target over the test run."""

    calls: int = 0  # calls made while the tests ran
    distinct: int = 0  # distinct calls among those it looked at
    recorded: int = 0
    dropped: int = 0  # calls it could not record (arguments that do not pickle, too large)
    spent_in: str = ""  # the test during which the target's budget ran out
    tests: int = 0  # test items that called it
    busiest: str = ""  # the test item that called it most
    busiest_calls: int = 0
    stopped: Mapping[str, int] = field(default_factory=dict)  # test items let be, by why


CTORS_PER_CLASS = 8  # recorded class calls of a method's class that build other `self`s


@dataclass(frozen=True)
class HarvestResult:
    calls: Mapping[str, tuple[HarvestedCall, ...]]
    drops: Mapping[str, Counter[str]]
    not_wrapped: Mapping[str, str]
    extra_paths: tuple[str, ...]
    exit_code: int | None
    timed_out: bool
    configured: bool = False  # the plugin ran: pytest got past loading the configuration
    log_tail: str = ""
    notes: tuple[str, ...] = field(default=())
    stats: Mapping[str, TargetStats] = field(default_factory=dict)
    drop_details: Mapping[tuple[str, str], str] = field(default_factory=dict)
    sequences: Mapping[str, tuple[CallSequence, ...]] = field(default_factory=dict)  # per class

    def class_calls(self, target: Target) -> tuple[str, ...]:
        """Distinct recorded class calls of a method target's class (first seen first, over the
        class's method targets in symbol order), at most `CTORS_PER_CLASS`: the calls that
        build other `self`s for its inputs."""
        if target.kind != "method" or not target.class_name:
            return ()
        prefix = f"{target.module}.{target.class_name}."
        found: dict[str, None] = {}
        for symbol in sorted(self.calls):
            if not symbol.startswith(prefix) or "." in symbol[len(prefix) :]:
                continue
            for call in self.calls[symbol]:
                if call.ctor_b64:
                    found.setdefault(call.ctor_b64)
                if len(found) >= CTORS_PER_CLASS:
                    return tuple(found)
        return tuple(found)


def _parse(out: Path, work: Path, classes: Mapping[str, ClassRef] | None = None) -> HarvestResult:
    calls: dict[str, list[HarvestedCall]] = defaultdict(list)
    drops: dict[str, Counter[str]] = defaultdict(Counter)
    not_wrapped: dict[str, str] = {}
    extra: list[str] = []
    stats: dict[str, TargetStats] = {}
    details: dict[tuple[str, str], str] = {}
    notes: list[str] = []
    sequences: list[dict[str, object]] = []
    configured = False
    text = out.read_text(encoding="utf-8", errors="replace") if out.exists() else ""
    for line in jsonl.split(text):
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a line cut short by a kill
        if type(rec) is not dict:
            continue  # the tests run beside this file: whatever else they wrote is not ours
        kind = rec.get("rec")
        configured = True
        try:
            if kind == "call":
                _add_call(calls[rec["key"]], rec)
            elif kind == "drop":
                drops[rec["key"]][rec["reason"]] += int(rec["count"])
                details.setdefault((rec["key"], rec["reason"]), str(rec.get("detail", "")))
            elif kind == "stats":
                stats[rec["key"]] = _stats(rec)
            elif kind == "wrap" and not rec["ok"]:
                not_wrapped[rec["key"]] = rec["reason"]
            elif kind == "paths":
                extra = _repo_paths(rec["sys_path"], work)
            elif kind == "sequence":
                sequences.append(rec)
            elif kind == "too_long":
                notes.append(_too_long_note([str(t) for t in rec["tests"]], rec["limit_s"]))
        except (KeyError, TypeError, ValueError):
            continue
    return HarvestResult(
        calls={k: tuple(v) for k, v in calls.items()},
        drops=dict(drops),
        not_wrapped=not_wrapped,
        extra_paths=tuple(extra),
        exit_code=None,
        timed_out=False,
        configured=configured,
        stats=stats,
        drop_details=details,
        notes=tuple(notes),
        sequences=read_sequences(sequences, classes or {}),
    )


def _too_long_note(tests: list[str], limit_s: object) -> str:
    first = f": {tests[0]}" + (f" and {len(tests) - 1} more" if len(tests) > 1 else "")
    return (
        f"stopped {len(tests)} test item(s) at the per-item limit ({limit_s} s, halved after "
        f"each one stopped), their calls so far kept{first}"
    )


def _stats(rec: Mapping[str, object]) -> TargetStats:
    """A stats record as `TargetStats` (TypeError or ValueError on a malformed one)."""
    counts = {f: int(str(rec.get(f, 0))) for f in ("calls", "distinct", "recorded", "dropped")}
    stopped = rec.get("stopped", {})
    if not isinstance(stopped, dict):
        raise TypeError("malformed stats record")
    return TargetStats(
        **counts,
        spent_in=str(rec.get("spent_in", "")),
        tests=int(str(rec.get("tests", 0))),
        busiest=str(rec.get("busiest", "")),
        busiest_calls=int(str(rec.get("busiest_calls", 0))),
        stopped={str(k): int(v) for k, v in stopped.items()},
    )


def _add_call(found: list[HarvestedCall], rec: Mapping[str, object]) -> None:
    """Append a call record; one written again because a test made it too marks the first
    visible (a record without the flag, from an older plugin, is visible)."""
    ctor = rec.get("ctor_b64")
    pickled = rec["pickle_b64"]
    origin = rec.get("origin", "")
    if type(pickled) is not str or type(origin) is not str:
        raise TypeError("malformed call record")
    visible = rec.get("visible") is not False
    call = HarvestedCall(
        pickled, origin, rec.get("rebuilt") is True, ctor if type(ctor) is str else "", visible
    )
    for n, seen in enumerate(found):
        if seen.pickle_b64 == call.pickle_b64:
            if visible and not seen.visible:
                found[n] = dataclasses.replace(seen, visible=True)
            return
    found.append(call)


def _repo_paths(sys_path: Sequence[str], work: Path) -> list[str]:
    """sys.path entries inside the repository copy (test folders pytest inserted), repo-relative."""
    out: list[str] = []
    root = work.resolve()
    for entry in sys_path:
        try:
            rel = Path(entry).resolve().relative_to(root).as_posix()
        except (ValueError, OSError):
            continue
        if rel not in out:
            out.append(rel)
    return out
