"""Iterator arguments made from the traced calls' iterables (`replicate.inputs.iterables`): a
sequence passed as an iterator, and one object in two slots that took the same kind of
iterable, which the recipe's pickle keeps one object when the runner builds the call."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

from replicate.core import CallInput
from replicate.inputs.iterables import declares_iterable, iterable_patches
from replicate.inputs.signature import parse_signature
from replicate.inputs.widening import Budget, widen
from replicate.jail.runner.calling import _unpack
from replicate.values import Items, plain
from tests.targets import made_target
from tests.unit.inputs.test_inputs import _seed

TARGET = made_target("interleave", "function", "def interleave(a, b, n):")
SEEDS = [_seed(0, ([1, 4, 7], [2, 5, 8], 3)), _seed(1, ("ab", "cde", 1))]


def _calls(inputs: tuple[CallInput, ...]) -> list[tuple[Any, ...]]:
    return [_unpack(base64.b64decode(item.pickle_b64))[0] for item in inputs]


def test_two_slots_of_one_kind_get_one_object_and_sequences_an_iterator() -> None:
    found = list(iterable_patches([{0: [1, 2], 1: [3], 2: 7}, {0: "ab", 1: (1,)}]))
    shared = [p for p in found if p.shared]
    assert [(p.at, sorted(p.patch)) for p in shared] == [(0, [0, 1]), (0, [0, 1])]
    as_iterator, as_list = (p.patch for p in shared)
    assert as_iterator[0] is as_iterator[1] and as_iterator[0] == Items((1, 2))
    assert as_list[0] is as_list[1] and as_list[0] == [1, 2]
    alone = {(p.at, *p.patch.items()) for p in found if not p.shared}
    assert alone == {
        (0, (0, Items((1, 2)))),
        (0, (1, Items((3,)))),
        (1, (0, Items(("a", "b")))),
        (1, (1, Items((1,)))),
    }
    # a str and a tuple are not one kind: no shared patch for the second call
    assert all(p.at == 0 for p in shared)


def test_only_slots_the_tests_pass_iterables_of_more_than_one_kind_to() -> None:
    """A slot the tests only ever give a str is text (`slugify(text)`): an iterator of its
    characters is no call the function is made for.  An iterator there, or a list in one call
    and a str in another, says the slot takes any iterable."""
    text_only = [{0: "ab", 1: "cd"}, {0: "xyz", 1: "w"}]
    assert list(iterable_patches(text_only)) == []
    shown_an_iterator = [{0: "ab", 1: "cd"}, {0: Items(("x",)), 1: "w"}]
    assert {tuple(p.patch) for p in iterable_patches(shown_an_iterator)} == {(0,)}
    mixed = [{0: "a", 1: "cd"}, {0: [1], 1: (2,)}]  # the longer one's items, shared
    found = list(iterable_patches(mixed))
    assert [dict(p.patch) for p in found if p.shared] == [
        {0: Items(("c", "d"))} | {1: Items(("c", "d"))}
    ]


def test_widening_passes_one_iterator_in_two_slots_and_the_runner_gets_one_object() -> None:
    made = widen(TARGET, SEEDS, 10, Budget(widened=0, edge=0, iterables=20))
    calls = _calls(made.inputs)
    aliased = [args for args in calls if args[0] is args[1]]
    assert any(isinstance(args[0], Iterator) for args in aliased)
    assert any(type(args[0]) is list for args in aliased)
    shared = next(args[0] for args in aliased if isinstance(args[0], Iterator))
    assert list(shared) == [1, 4, 7]
    # a sequence alone as an iterator, the other slots the seed's own
    assert any(
        isinstance(args[0], Iterator) and args[1] == [2, 5, 8] and args[2] == 3 for args in calls
    )
    assert all(item.stratum == item.provenance == "widened" for item in made.inputs)


def test_one_object_twice_is_another_input_than_two_equal_ones() -> None:
    """Two equal iterators in the two slots (a traced call) do not make the shared one a
    repeat: the two calls differ."""
    items = plain.encode(Items((1, 4, 7)))
    apart = _seed(0, (iter([1, 4, 7]), iter([1, 4, 7]), 3), [items, items, plain.encode(3)])
    made = widen(TARGET, [apart], 10, Budget(widened=0, edge=0, iterables=20))
    assert any(args[0] is args[1] for args in _calls(made.inputs))


def test_the_budget_bounds_them() -> None:
    assert widen(TARGET, SEEDS, 10, Budget(widened=0, edge=0, iterables=0)).inputs == ()
    assert len(widen(TARGET, SEEDS, 10, Budget(widened=0, edge=0, iterables=3)).inputs) == 3


LISTS_ONLY = [_seed(0, ([1, 4, 7], [2, 5, 8], [3, 6, 9])), _seed(1, ([1, 4], [2, 5, 7], [3, 6]))]


def _aliased(signature: str) -> list[tuple[Any, ...]]:
    target = made_target("interleave_longest", "function", signature)
    made = widen(target, LISTS_ONLY, 10, Budget(widened=0, edge=0, iterables=20))
    return [args for args in _calls(made.inputs) if args[0] is args[1] or args[1] is args[2]]


def test_a_signature_that_says_iterables_gets_them_where_the_tests_pass_only_lists() -> None:
    """more-itertools' `interleave_longest(*iterables)`: its recorded tests pass only lists, so
    the tests alone never show that it takes iterators; its signature says so.  The control: the
    same calls to `*lists` get none."""
    assert _aliased("def interleave_longest(*lists):") == []
    aliased = _aliased("def interleave_longest(*iterables):")
    assert any(isinstance(args[0], Iterator) and args[0] is args[1] for args in aliased)
    assert any(type(args[1]) is list and args[1] is args[2] for args in aliased)


def test_what_the_signature_says_takes_any_iterable() -> None:
    def params(text: str) -> list[bool]:
        found = parse_signature(made_target("f", "function", text))
        assert found is not None
        every = [*found.positional, found.vararg, *found.keyword]
        return [declares_iterable(p) for p in every if p is not None]

    assert params("def f(iterable, n, *, key=None):") == [True, False, False]
    assert params("def f(a: Iterable[int], b: typing.Iterator[str] | None, c: list):") == [
        True,
        True,
        False,
    ]
    assert params("def f(text: str, *iterators):") == [False, True]
    assert declares_iterable(None) is False
