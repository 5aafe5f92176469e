from __future__ import annotations

from replicate.executors import in_lanes, openers


def test_work_goes_a_few_groups_at_a_time_each_group_s_one_after_another() -> None:
    sizes = {"a": 5, "b": 1, "c": 3, "d": 2, "e": 1}
    items = [f"{group}{n}" for group, count in sizes.items() for n in range(count)]
    order = in_lanes(items, lambda item: item[0], 2)
    # lanes: a (5) + b (1) and c (3) + d (2) + e (1), the largest groups first, taken in turns
    assert order == ["a0", "c0", "a1", "c1", "a2", "c2", "a3", "d0", "a4", "d1", "b0", "e0"]
    assert sorted(order) == sorted(items)
    # each group keeps its order, and the items handed out one after the other differ in group
    assert all(order[n][0] != order[n + 1][0] for n in range(len(order) - 1))
    one = "".join(item[0] for item in in_lanes(items, lambda item: item[0], 1))
    assert one == "aaaaacccddbe"  # one lane: whole groups, the largest first
    assert in_lanes([], lambda item: item, 3) == []


def test_openers_name_each_groups_first_item_ahead_of_it() -> None:
    order = ["a0", "c0", "a1", "c1", "a2", "c2", "a3", "d0", "a4", "d1", "b0", "e0"]
    found = openers(order, lambda item: item[0], 4)
    # d first appears at 7, b at 10, e at 11: each is got ready 4 positions earlier; a and c
    # appear within the first 4, so their own first items get them ready
    assert found == {3: ["d0"], 6: ["b0"], 7: ["e0"]}
    assert openers(order, lambda item: item[0], 0) == {}  # no lookahead
    assert openers(order, lambda item: item[0], 20) == {}  # nothing that far ahead
    assert openers([], lambda item: item, 2) == {}
