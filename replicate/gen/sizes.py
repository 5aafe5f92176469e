"""The size of an input's expected outcome, as the task stores it: measured once per input and
asked by screening, seeding and the task's byte budget alike."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from replicate.jail import Jail

BULKY_BYTES = 20_000  # a generated input whose expected outcome is larger is not worth its storage
# ...unless a method's traced outcomes are as large (its `self` after the call, which cutting
# the arguments down does not shrink: prettytable's tables left every generated input of 13
# methods "too large"), up to this.
MAX_BULKY_BYTES = 100_000

Outcome = Mapping[str, Any]
_INPUTS_SHOWN = frozenset({"args_in", "kwargs_in", "ctor_in", "t"})


def strip_inputs(outcome: Outcome) -> Outcome:
    """An outcome as the task stores it: without the arguments the runner reported before the
    call, nor its time."""
    return {k: v for k, v in outcome.items() if k not in _INPUTS_SHOWN}


def bulky_outcome(outcome: Outcome) -> bool:
    return _size(outcome) > BULKY_BYTES


def _text(outcome: Outcome) -> str:
    """The outcome's JSON text as the task stores it (its inputs stripped)."""
    return json.dumps(strip_inputs(outcome))


def _size(outcome: Outcome) -> int:
    return len(_text(outcome))


class Sizes:
    """The JSON size of each input's first outcome, its inputs stripped (what the task stores),
    by input index: measured once, where screening, seeding and the task's byte budget each ask
    for it (encoding outcomes to measure them was a tenth of a gen's own Python, each outcome
    encoded up to three times).  One per golden run or search: an index has one first outcome.
    With `folder` (where the batch keeps the repository), the outcomes whose text names it."""

    def __init__(self, folder: str | None = None) -> None:
        self._found: dict[int, int] = {}
        self.folder, self._located = folder, set[int]()
        self.limit = BULKY_BYTES

    def allow_as_large_as(self, outcomes: Mapping[int, Outcome]) -> None:
        """Let a generated input's outcome be as large as the largest of `outcomes` (the traced
        inputs' first ones), up to `MAX_BULKY_BYTES`: no larger than what the tests give."""
        largest = max((self.of(i, o) for i, o in outcomes.items()), default=0)
        self.limit = max(self.limit, min(largest, MAX_BULKY_BYTES))

    def of(self, index: int, outcome: Outcome) -> int:
        found = self._found.get(index)
        if found is None:
            text = _text(outcome)
            found = self._found[index] = len(text)
            if self.folder and self.folder in text:
                self._located.add(index)
        return found

    @classmethod
    def in_batch(cls, jail: Jail) -> Sizes:  # which outcomes name the repository's folder too
        return cls(str(jail.ctx.tree.parent))

    def located(self, index: int, outcome: Outcome) -> bool:
        """Whether the outcome names the batch's folder: a batch moved elsewhere, or exported,
        runs the repository from another path, and even the original would not answer so."""
        self.of(index, outcome)
        return index in self._located

    def bulky(self, index: int) -> Callable[[Outcome], bool]:
        """`bulky_outcome` for the first outcome of input `index` (past `limit`)."""
        return lambda outcome: self.of(index, outcome) > self.limit
