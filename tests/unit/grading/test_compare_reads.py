"""The comparison takes into account how far a call and its result read each iterator argument
(wire.READ) for a task minted with `arg_reads` (grader 7), and not for one minted before.

Outcomes come from the runner's own `_call` (in this process) on two bodies that return the same
triples: more-itertools' `triplewise`, which reads two items when it returns, and a lazy one."""

from __future__ import annotations

from itertools import islice, tee
from typing import Any

from replicate.core import CallInput
from replicate.core.records import GradingSettings
from replicate.grading.compare import compare_outcome, is_gradable
from replicate.grading.reward import score
from replicate.jail import READ
from replicate.jail.runner.base import EncodeLimits
from replicate.jail.runner.calling import _call
from tests.unit.jail.test_arg_reads import eager_triplewise, lazy_triplewise

GRADER_7 = GradingSettings(max_arg_items=1_000, arg_reads=True)
GRADER_6 = GradingSettings(max_arg_items=1_000)


def outcome(fn: Any, items: list[int], reads: bool = True) -> dict[str, Any]:
    lim = EncodeLimits(arg_items=1_000, reads=reads)
    return _call(fn, (iter(items),), {}, lim)()


def test_a_call_that_reads_less_when_it_returns_is_a_mismatch() -> None:
    expected = outcome(eager_triplewise, [1, 2, 3, 4])
    got = outcome(lazy_triplewise, [1, 2, 3, 4])
    found = compare_outcome(expected, got, GRADER_7)
    assert found is not None
    assert (found.kind, found.path) == ("args-read", "args[0]")
    assert found.expected.startswith("2 items read when the call returned, 4 once")
    assert found.got.startswith("0 items read when the call returned")
    assert compare_outcome(expected, outcome(eager_triplewise, [1, 2, 3, 4]), GRADER_7) is None
    assert is_gradable(expected, GRADER_7)


def test_a_grader_6_task_does_not_compare_the_counts() -> None:
    """The control: with `arg_reads` off the two are the same (what grader 6 gave), whether the
    outcomes carry counts (a task's settings turned off) or not (a job that records none)."""
    expected = outcome(eager_triplewise, [1, 2, 3, 4])
    got = outcome(lazy_triplewise, [1, 2, 3, 4])
    assert compare_outcome(expected, got, GRADER_6) is None
    uncounted = outcome(lazy_triplewise, [1, 2, 3, 4], reads=False)
    assert READ not in uncounted["args"][0]
    assert compare_outcome(expected, uncounted, GRADER_6) is None
    # with the counts compared, a candidate's outcome that lacks them never matches
    assert compare_outcome(expected, uncounted, GRADER_7) is not None


def test_what_is_left_still_differs_as_an_argument_after_the_call() -> None:
    def reads_one_more(iterable: Any) -> Any:
        it = iter(iterable)
        next(it)
        return zip(*(islice(t, i, None) for i, t in enumerate(tee(it, 3))), strict=False)

    found = compare_outcome(
        outcome(eager_triplewise, [1, 2, 3, 4, 5]),
        outcome(reads_one_more, [1, 2, 3, 4, 5]),
        GRADER_7,
    )
    assert found is not None and found.kind == "value"


def test_the_reward_counts_a_read_mismatch() -> None:
    inputs = [CallInput(index=n, pickle_b64="") for n in range(4)]
    sizes = [[], [1], [1, 2, 3], [1, 2, 3, 4]]
    expected = {n: outcome(eager_triplewise, items) for n, items in enumerate(sizes)}
    got = {n: outcome(lazy_triplewise, items) for n, items in enumerate(sizes)}
    # two items read of [1, 2, 3] and [1, 2, 3, 4], one of [1], none of []
    assert score(inputs, expected, got, GRADER_7).reward == 0.25
    assert score(inputs, expected, got, GRADER_6).reward == 1.0
