"""Lazy tools over iterables: chunks, windows, flattening, pairs, interleaving, running totals."""

import operator
from collections import deque

_END = object()


def chunked(items, size):
    """Yield lists of ``size`` consecutive items; the last chunk may be shorter.

    >>> list(chunked(range(7), 3))
    [[0, 1, 2], [3, 4, 5], [6]]
    """
    if size < 1:
        raise ValueError("size must be at least 1")
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def sliding_window(items, n):
    """Yield overlapping tuples of ``n`` consecutive items (nothing if there are fewer than n).

    >>> list(sliding_window("abcd", 2))
    [('a', 'b'), ('b', 'c'), ('c', 'd')]
    """
    if n < 1:
        raise ValueError("window size must be at least 1")
    window = deque(maxlen=n)
    for item in items:
        window.append(item)
        if len(window) == n:
            yield tuple(window)


def flatten(nested, depth=None):
    """Yield the leaves of nested lists and tuples, descending at most ``depth`` levels.

    Strings, bytes, dicts and sets are leaves.  ``depth=None`` flattens completely.

    >>> list(flatten([1, [2, (3, [4])], 5]))
    [1, 2, 3, 4, 5]
    >>> list(flatten([1, [2, [3, [4]]]], depth=1))
    [1, 2, [3, [4]]]
    """
    if isinstance(nested, (str, bytes)):
        raise TypeError("flatten() needs a list or tuple, not a string")
    if depth is not None and depth < 0:
        raise ValueError("depth must be >= 0")
    for item in nested:
        if isinstance(item, (list, tuple)) and (depth is None or depth > 0):
            yield from flatten(item, None if depth is None else depth - 1)
        else:
            yield item


def pairwise(items):
    """Yield each item with its successor: ``(s0, s1), (s1, s2), ...``.

    >>> list(pairwise([1, 2, 3]))
    [(1, 2), (2, 3)]
    """
    iterator = iter(items)
    previous = next(iterator, _END)
    if previous is _END:
        return
    for item in iterator:
        yield previous, item
        previous = item


def interleave(*iterables, longest=True):
    """Yield one item from each iterable in turn.

    Exhausted iterables are skipped; with ``longest=False`` the first exhausted one stops
    everything instead.

    >>> list(interleave("abc", [1, 2], "XYZW"))
    ['a', 1, 'X', 'b', 2, 'Y', 'c', 'Z', 'W']
    >>> list(interleave("abc", [1], "XYZ", longest=False))
    ['a', 1, 'X', 'b']
    """
    iterators = deque(iter(it) for it in iterables)
    if not iterators:
        return
    while iterators:
        current = iterators.popleft()
        value = next(current, _END)
        if value is _END:
            if not longest:
                return
            continue
        yield value
        iterators.append(current)


def running_totals(values, func=operator.add, initial=None):
    """Yield the running combination of ``values`` with ``func`` (sums by default).

    With ``initial`` the first value yielded is ``initial`` itself.

    >>> list(running_totals([1, 2, 3, 4]))
    [1, 3, 6, 10]
    >>> list(running_totals([2, 3, 4], operator.mul, initial=1))
    [1, 2, 6, 24]
    """
    iterator = iter(values)
    if initial is None:
        total = next(iterator, _END)
        if total is _END:
            return
    else:
        total = initial
    yield total
    for value in iterator:
        total = func(total, value)
        yield total


def unique_everseen(items, key=None):
    """Yield items not seen before, keeping first occurrences; ``key`` decides sameness.

    Unhashable keys are compared by equality, more slowly.

    >>> list(unique_everseen("AAAABBBCCDAABBB"))
    ['A', 'B', 'C', 'D']
    >>> list(unique_everseen(["a", "B", "b", "A"], key=str.lower))
    ['a', 'B']
    """
    seen_hashable = set()
    seen_unhashable = []
    for item in items:
        marker = item if key is None else key(item)
        try:
            if marker in seen_hashable:
                continue
            seen_hashable.add(marker)
        except TypeError:
            if marker in seen_unhashable:
                continue
            seen_unhashable.append(marker)
        yield item


def split_when(items, pred):
    """Split ``items`` into lists, starting a new list between ``a`` and ``b`` when ``pred(a, b)``.

    >>> list(split_when([1, 2, 3, 3, 2, 5, 6], lambda a, b: b < a))
    [[1, 2, 3, 3], [2, 5, 6]]
    """
    iterator = iter(items)
    first = next(iterator, _END)
    if first is _END:
        return
    group = [first]
    for item in iterator:
        if pred(group[-1], item):
            yield group
            group = []
        group.append(item)
    yield group
