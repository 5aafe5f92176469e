"""The order many pieces of work are handed to a few workers in, so that pieces sharing an
expensive resource (the jails that serve one target file) come one after another."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

T = TypeVar("T")


def in_lanes(items: Sequence[T], group: Callable[[T], Hashable], lanes: int) -> list[T]:
    """`items` taken in turns from `lanes` lanes, each lane whole groups one after another (the
    largest groups first, each to the lane with the fewest items so far; a group keeps its
    items' order): the items at work at once are of different groups, and each group's items
    come one after another, so what a group's item started serves the group's next."""
    groups: dict[Hashable, list[T]] = {}
    for item in items:
        groups.setdefault(group(item), []).append(item)
    rows: list[list[T]] = [[] for _ in range(max(1, lanes))]
    for members in sorted(groups.values(), key=len, reverse=True):
        min(rows, key=len).extend(members)
    turns = itertools.zip_longest(*rows)
    return [item for turn in turns for item in turn if item is not None]


def openers(order: Sequence[T], group: Callable[[T], Hashable], ahead: int) -> dict[int, list[T]]:
    """Where in `order` to get each group's resources ready: for each position, the first items
    of the groups that first appear `ahead` positions later (a group that appears within the
    first `ahead` positions is none of them: its own first item gets them ready, as early)."""
    found: dict[int, list[T]] = {}
    seen: set[Hashable] = set()
    for position, item in enumerate(order):
        key = group(item)
        if key in seen:
            continue
        seen.add(key)
        if position >= ahead > 0:
            found.setdefault(position - ahead, []).append(item)
    return found
