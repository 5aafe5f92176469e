"""How far a call, and then its result, read each iterator argument (`runner.calling.ArgReads`,
wire.READ): recorded on the iterator's node among the arguments after the call, when the job
asks for it (grader 7), for iterators whose count can be read without consuming them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import islice, tee
from typing import Any

from replicate.inputs import render_call
from replicate.jail import READ
from replicate.jail.runner.base import EncodeLimits
from replicate.jail.runner.calling import _call
from replicate.jail.wire import SAME
from tests.targets import made_target

READS = EncodeLimits(arg_items=1_000, reads=True)
TARGET = made_target("f", "function", "def f(*args):")


def outcome(
    fn: Callable[..., Any], *args: Any, lim: EncodeLimits = READS, **kwargs: Any
) -> dict[str, Any]:
    return _call(fn, args, kwargs, lim)()


def eager_triplewise(iterable: Any) -> Any:
    """more-itertools 10.5.0's `triplewise`: two items read when it returns."""
    t1, t2, t3 = tee(iterable, 3)
    next(t3, None)
    next(t3, None)
    next(t2, None)
    return zip(t1, t2, t3, strict=False)


def lazy_triplewise(iterable: Any) -> Any:
    """The same triples, nothing read until they are."""
    return zip(*(islice(it, i, None) for i, it in enumerate(tee(iterable, 3))), strict=False)


def test_an_iterator_argument_carries_what_the_call_and_its_result_read() -> None:
    eager = outcome(eager_triplewise, iter([1, 2, 3, 4]))
    lazy = outcome(lazy_triplewise, iter([1, 2, 3, 4]))
    assert eager["value"] == lazy["value"]  # the same triples
    assert eager["args"][0][READ] == [2, 4]
    assert lazy["args"][0][READ] == [0, 4]
    # without the counts the two outcomes are the same: what grader 6 saw
    del eager["args"][0][READ], lazy["args"][0][READ]
    assert {k: v for k, v in eager.items() if k != "t"} == {
        k: v for k, v in lazy.items() if k != "t"
    }


def test_a_call_that_raises_counts_what_it_read_before_raising() -> None:
    def first_then_fail(items: Iterator[int]) -> None:
        next(items)
        raise ValueError("no")

    out = outcome(first_then_fail, iter("abc"))
    assert out["status"] == "raised"
    assert out["args"][0][READ] == [1, 1]
    assert len(out["args"][0]["v"]) == 2  # what is left, read after the counts


def test_one_iterator_in_two_slots_carries_its_counts_in_both() -> None:
    def pairs(a: Iterator[int], b: Iterator[int]) -> list[tuple[int, int]]:
        return list(zip(a, b, strict=False))

    shared = iter([1, 2, 3, 4, 5])
    out = outcome(pairs, shared, shared)
    assert out["value"]["v"][0]["v"] == [{"t": "int", "v": "1"}, {"t": "int", "v": "2"}]
    assert out["args"][0][READ] == out["args"][1][READ] == [5, 5]


def test_iterators_in_a_list_argument_and_by_keyword_are_counted() -> None:
    def heads(iterables: list[Iterator[int]], extra: Iterator[int]) -> list[int]:
        return [next(it) for it in iterables] + [next(extra)]

    out = outcome(heads, [iter(range(3)), iter((7, 8))], extra=iter({"k": 1}))
    assert [item[READ] for item in out["args"][0]["v"]] == [[1, 1], [1, 1]]
    assert out["kwargs"]["extra"][READ] == [1, 1]


def test_a_lazy_result_read_later_counts_only_after() -> None:
    def doubled(items: Iterator[int]) -> Iterator[int]:
        return (2 * x for x in items)

    out = outcome(doubled, iter(range(4)))
    assert out["args"][0][READ] == [0, 4]


def test_iterators_it_cannot_count_without_reading_carry_no_counts() -> None:
    class Counting:  # a Python class: its `__length_hint__` could say anything
        def __init__(self) -> None:
            self.n = 0

        def __iter__(self) -> Counting:
            return self

        def __next__(self) -> int:
            self.n += 1
            if self.n > 3:
                raise StopIteration
            return self.n

        def __length_hint__(self) -> int:
            return 99

    def first(items: Iterator[Any]) -> Any:
        return next(items)

    for argument in [(x for x in range(3)), map(str, range(3)), Counting()]:
        out = outcome(first, argument)
        assert out["status"] == "returned"
        assert READ not in out["args"][0], type(argument)


def test_a_job_without_arg_reads_records_none() -> None:
    """Grader 6 tasks: the runner records no counts, and their outcomes stay as minted."""
    out = outcome(eager_triplewise, iter([1, 2, 3, 4]), lim=EncodeLimits(arg_items=1_000))
    assert READ not in out["args"][0]
    assert out["args"][0]["v"] == []


def test_an_argument_passed_twice_is_reported_before_the_call_as_the_same_object() -> None:
    """At gen time the arguments before the call are reported for rendering and widening: the
    second slot of one iterator passed twice is named after the first, not shown read empty."""
    shared = iter([1, 2])
    parts = [1, 1]
    loaded = {"status": "loaded", "args": (shared, shared, parts, parts, (), ()), "kwargs": {}}
    out = _call(lambda *a: None, (), {}, READS, loaded)()
    first, again, _items, items_again, empty, empty_again = out["args_in"]
    assert first["t"] == "iter" and len(first["v"]) == 2
    assert again == {"t": SAME, "v": "args[0]"}
    assert items_again == {"t": SAME, "v": "args[2]"}
    assert empty == empty_again == {"t": "tuple", "v": []}
    assert render_call(TARGET, out) == (
        "f(<generator: [1, 2]>, <the same object as args[0]>, [1, 1], "
        "<the same object as args[2]>, (), ())"
    )
