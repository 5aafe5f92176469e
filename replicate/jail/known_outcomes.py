"""Result frames whose outcome text was read before: taken apart without decoding the JSON again.

Most of what a gen reads on its channels repeats: the golden second run gives the first run's
outcomes, most mutants give the reference's, the reference's re-grade gives its own.  The runner
writes a result frame as ``{"event":"result","i":N,"outcome":{...,"t":T}}``, the call's duration
``t`` last.  Everything of the outcome before ``,"t":`` is its *text*; two frames whose outcome
texts are the same bytes decode to the same outcome but for ``i`` and ``t``, whatever wrote them
(the candidate may forge frames, but the same bytes decode the same way).  So a frame whose head,
text and tail have exactly that shape, and whose text was decoded before, is the outcome decoded
then with this frame's ``t``: the lookup hashes the text once, where decoding builds every node.

A golden run asks the runner for the arguments as the call received them too (``args_in``,
``kwargs_in``, ``ctor_in``, after the rest): its outcome is also kept under the text a run
without them writes (the runner's encoding of the same values), so the mutants' and the
re-grade's outcomes of that input are read as the expected one's very values, and
`replicate.grading.exact` takes them as equal without looking inside.

The outcomes handed out share their nested values (lists, dicts) with each other and with the
first frame decoded from the same text: nothing on the trusted side changes an outcome once read
(`audit` checks that on whatever is kept).  The table holds at most `BUDGET_BYTES` of text (8
times that while a gen is at work: `while_minting`), the oldest text leaving first; an outcome
text longer than `MAX_TEXT_BYTES` is never kept.  Decoded, a text takes ~10 times its size.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, cast

from replicate.jail import wire

BUDGET_BYTES = 1 << 20  # a grader's (run, serve, reward functions): a candidate's re-run repeats
MINTING_BUDGET_BYTES = 8 << 20  # gen's: the mutants and the re-grade repeat the reference's texts
MAX_TEXT_BYTES = 1 << 20

_NUMBER = rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
_RESULT = re.compile(
    rb'\{"event":"' + wire.RESULT.encode("ascii") + rb'","i":(-?(?:0|[1-9][0-9]{0,17})),'
    rb'"outcome":(\{.*),"t":(' + _NUMBER + rb")\}\}",
    re.DOTALL,
)


# The arguments as the call received them (gen's golden runs ask for them): an outcome without
# them is what every other run of the same input writes (mutants, the reference's re-grade).
_SHOWN = frozenset({"args_in", "kwargs_in", "ctor_in"})
# The runner's own encoding (`runner/channel.py`: compact, ASCII, keys in their order): JSON values
# decoded from a frame encode back to the very text the runner writes for them.
_RUNNERS_JSON = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


class KnownOutcomes:
    """Outcome texts decoded before, with their outcomes less ``t`` (see the module docstring)."""

    def __init__(self, budget_bytes: int = BUDGET_BYTES) -> None:
        self.usual = budget_bytes
        self.minting = 0  # gens at work in this process, each keeping `MINTING_BUDGET_BYTES`
        self.size = 0
        self.untimed: OrderedDict[bytes, dict[str, Any]] = OrderedDict()  # oldest first
        self.lock = threading.Lock()

    @property
    def budget(self) -> int:
        """The text kept at most: more while a gen of this process is at work."""
        return max(self.usual, MINTING_BUDGET_BYTES) if self.minting else self.usual

    def read(
        self, line: bytes, start: int, decode: Callable[[], wire.Frame | None]
    ) -> wire.Frame | None:
        """The frame `line[start:]` holds: from its known text, else `decode()`'s, learnt."""
        parts = _RESULT.fullmatch(line, start)
        known = None if parts is None else self._known(parts)
        if known is not None:
            return known
        frame = decode()
        if parts is not None and frame is not None:
            self._learn(parts, frame)
        return frame

    def frame(self, line: bytes, start: int) -> wire.Frame | None:
        """The result frame `line[start:]` holds when its outcome text is known, else None."""
        parts = _RESULT.fullmatch(line, start)
        return None if parts is None else self._known(parts)

    def learn(self, line: bytes, start: int, frame: wire.Frame) -> None:
        """Keep the outcome of `frame`, just decoded from `line[start:]`, by its text."""
        parts = _RESULT.fullmatch(line, start)
        if parts is not None:
            self._learn(parts, frame)

    def _known(self, parts: re.Match[bytes]) -> wire.Frame | None:
        untimed = self.untimed.get(parts.group(2))
        if untimed is None:
            return None
        outcome = cast("wire.Outcome", {**untimed, "t": _number(parts.group(3))})
        return {"event": wire.RESULT, "i": int(parts.group(1)), "outcome": outcome}

    def _learn(self, parts: re.Match[bytes], frame: wire.Frame) -> None:
        outcome: Any = frame.get("outcome")
        if type(outcome) is not dict or not outcome or next(reversed(outcome)) != "t":
            return  # {**untimed, "t": ...} would not be what decoding gives
        self._keep(parts.group(2), {k: v for k, v in outcome.items() if k != "t"})
        if not _SHOWN.isdisjoint(outcome):  # also as a run without them writes it
            plain = {k: v for k, v in outcome.items() if k not in _SHOWN and k != "t"}
            text = _RUNNERS_JSON(plain).encode("ascii")
            self._keep(text[:-1], plain)  # "{...}" less its "}", as the pattern takes it

    @contextlib.contextmanager
    def while_minting(self) -> Iterator[None]:
        """Keep `MINTING_BUDGET_BYTES` of text inside (a gen), the usual budget once no gen of
        this process is at work (the texts past it leave then)."""
        with self.lock:
            self.minting += 1
        try:
            yield
        finally:
            with self.lock:
                self.minting -= 1
                self._trim()

    def _keep(self, text: bytes, untimed: dict[str, Any]) -> None:
        if len(text) > MAX_TEXT_BYTES:
            return
        with self.lock:
            if text in self.untimed:
                return
            self.untimed[text] = untimed
            self.size += len(text)
            self._trim()

    def clear(self) -> None:
        """Forget every text."""
        with self.lock:
            self.untimed.clear()
            self.size = 0

    def _trim(self) -> None:
        # popitem, not `next(iter(dict))`, which gets slower with each removal
        while self.size > self.budget and self.untimed:
            self.size -= len(self.untimed.popitem(last=False)[0])

    def audit(self) -> list[bytes]:
        """The kept texts whose outcome no longer decodes from them: something changed an
        outcome handed out (empty when every reader left them as read)."""
        with self.lock:
            kept = list(self.untimed.items())
        return [text for text, untimed in kept if _exact(_decoded(text)) != _exact(untimed)]


def _number(token: bytes) -> int | float:
    """As `json` reads a number: an int unless it has a fraction or an exponent."""
    return float(token) if any(c in token for c in b".eE") else int(token)


def _exact(outcome: dict[str, Any]) -> bytes:
    return marshal.dumps(outcome, 2)  # types and key order kept: 1, 1.0 and True differ


def _decoded(text: bytes) -> dict[str, Any]:
    outcome = json.loads(text + b',"t":0}')
    return {k: v for k, v in outcome.items() if k != "t"}


KNOWN = KnownOutcomes()  # one per process: the channels of every run it reads
