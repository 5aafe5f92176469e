"""Red team: re-implementations that return the same values but differ in what they do to their
iterator arguments score under 1.0 on more-itertools 10.5.0 (minted once per session,
tests/e2e/conftest.py), and scored 1.0 on grader 6 (the positive control).

- Read later: more-itertools' `sliding_window` (3 <= n <= 20) and `triplewise` read n-1 items of
  their argument when called (tee, then each copy advanced); the tee/islice windows below read
  nothing until their result is. The same windows, and once read, the same nothing left: only
  how far the argument had been read when the call returned tells them apart (grader 7's
  `arg_reads`; the control turns it off).
- One object read as two: `roundrobin` and `interleave_longest` read one iterator passed in two
  slots in turn from both; a round-robin that lists each argument first empties it into the
  first. Only an input that passes one object twice tells them apart (grader 7's widening;
  the control leaves those inputs out). `interleave_longest`'s tests pass only lists: its
  inputs pass one object twice because its signature says `*iterables`
  (`replicate.inputs.iterables.declares_iterable`; before, it had none and the round-robin
  scored 1.0).
"""

from __future__ import annotations

import base64
import dataclasses
import itertools
import json
from typing import Any

import pytest

from replicate.batch.store import Batch, LoadedTask
from replicate.cache import cache_root
from replicate.core import CallInput, Verdict
from replicate.grading.grader import grade_text
from replicate.jail import Jail
from replicate.jail.context import context_for
from replicate.jail.runner.calling import _unpack
from replicate.sandbox import get_sandbox
from tests.e2e.conftest import Minted

WINDOWS = """
from collections import deque
from itertools import islice, tee


def sliding_window(iterable, n):
    if n < 1:
        raise ValueError(f'n should be at least one, not {n}')
    if n > 20:
        def windows():
            it = iter(iterable)
            window = deque(islice(it, n - 1), maxlen=n)
            for x in it:
                window.append(x)
                yield tuple(window)
        return windows()
    return zip(*(islice(it, i, None) for i, it in enumerate(tee(iterable, n))))
"""
TRIPLES = """
from itertools import islice, tee


def triplewise(iterable):
    return zip(*(islice(it, i, None) for i, it in enumerate(tee(iterable, 3))))
"""
LISTED = """
def {name}(*iterables):
    lists = [list(iterable) for iterable in iterables]
    for i in range(max(map(len, lists), default=0)):
        for items in lists:
            if i < len(items):
                yield items[i]
"""
CASES = {
    "more_itertools.recipes.sliding_window": (WINDOWS, "args-read"),
    "more_itertools.recipes.triplewise": (TRIPLES, "args-read"),
    "more_itertools.recipes.roundrobin": (LISTED.format(name="roundrobin"), "value"),
    "more_itertools.more.interleave_longest": (LISTED.format(name="interleave_longest"), "value"),
}


def _task(minted: Minted, symbol: str) -> LoadedTask:
    batch = Batch.open(minted.batch)
    ident = next(i for i in batch.ids if batch.spec(i).source.symbol == symbol)
    return batch.load(ident)


def _passes_one_object_twice(item: CallInput) -> bool:
    """Whether the input passes one list or iterator in two argument slots (read from our own
    recipe of the pinned library's plain values, in this test only)."""
    args, kwargs = _unpack(base64.b64decode(item.pickle_b64))
    values = [v for v in [*args, *kwargs.values()] if not isinstance(v, str | int | tuple)]
    return any(a is b for a, b in itertools.combinations(values, 2))


def as_grader_6(task: LoadedTask) -> LoadedTask:
    """The task as grader 6 graded it: no read counts compared, no input passing one object
    in two slots (the sequences passed as iterators stay: grader 6 compared what was left)."""
    inputs = tuple(i for i in task.inputs if not _passes_one_object_twice(i))
    grading = task.hidden.grading.model_copy(update={"arg_reads": False})
    hidden = task.hidden.model_copy(update={"grading": grading})
    return dataclasses.replace(task, inputs=inputs, hidden=hidden)


def _grade(task: LoadedTask, text: str) -> Verdict:
    jail = Jail(context_for(task.repo, cache_root()), get_sandbox("local"))
    verdict = grade_text(task, text, jail)
    assert verdict.status == "graded", verdict.reason
    return verdict


@pytest.mark.parametrize("symbol", sorted(CASES))
def test_a_candidate_that_treats_its_iterator_arguments_otherwise_scores_below_one(
    symbol: str, more_itertools: Minted
) -> None:
    text, kind = CASES[symbol]
    task = _task(more_itertools, symbol)
    before = _grade(as_grader_6(task), text)
    assert before.reward == 1.0, before.counterexample  # the control: it passed before
    now = _grade(task, text)
    found: dict[str, Any] = now.counterexample.model_dump() if now.counterexample else {}
    print(json.dumps({"symbol": symbol, "before": before.reward, "now": now.reward, **found}))
    assert now.reward < 1.0
    assert str(found.get("detail", "")).startswith(kind), found
