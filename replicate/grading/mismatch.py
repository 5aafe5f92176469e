"""What a comparison found: the first difference between an expected and an observed outcome,
each side's text rendered only when it is read."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from replicate.values import render_exception

__all__ = ["Mismatch", "Shown", "shown", "shown_raise", "shown_reads"]

Shown = str | Callable[[], str]  # a side's text, or how to render it when it is first read


class Mismatch:
    """The first difference between an expected and an observed outcome: its `kind` (value,
    exception, args-after-call, args-read, timeout, missing, load_error, status), `path` (e.g.
    "return[2]['a']", "raise", "args[0]") and both sides as text.  A side is rendered when it is
    first read: a grade reads one mismatch of a failing candidate's hundreds (the verdict's
    counterexample), and rendering them all cost a sixth of a warm grade.  Equal when kind, path
    and both texts are; not to be changed once made."""

    __slots__ = ("_expected", "_got", "kind", "path")

    def __init__(self, kind: str, path: str, expected: Shown, got: Shown) -> None:
        self.kind, self.path = kind, path
        self._expected, self._got = expected, got

    @property
    def expected(self) -> str:
        if not isinstance(self._expected, str):
            self._expected = self._expected()
        return self._expected

    @property
    def got(self) -> str:
        if not isinstance(self._got, str):
            self._got = self._got()
        return self._got

    def _key(self) -> tuple[str, str, str, str]:
        return (self.kind, self.path, self.expected, self.got)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mismatch) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Mismatch{self._key()!r}"


def shown(rendering: Callable[[Any], str], node: Any) -> Callable[[], str]:
    """`rendering(node)`, when it is read."""
    return functools.partial(rendering, node)


def shown_raise(exc: Any) -> Callable[[], str]:
    """An exception record as ``raise ...``, when it is read."""
    return lambda: "raise " + render_exception(exc)


def shown_reads(counts: Any) -> str:
    """An iterator argument's counts (wire.READ): how many items it had yielded when the call
    returned, and once the call's result was read."""
    if type(counts) is not list or len(counts) != 2:
        return "<malformed>"
    at_return, after = counts
    noun = "item" if at_return == 1 else "items"
    return f"{at_return} {noun} read when the call returned, {after} once its result was read"
