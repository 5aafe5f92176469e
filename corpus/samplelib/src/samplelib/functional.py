"""Higher-order helpers: grouping, partitioning, folding and applying callables."""

_MISSING = object()


def group_by(items, key):
    """Group ``items`` into a dict ``key(item) -> [items...]``, keys in first-seen order.

    >>> group_by(["apple", "avocado", "banana", "cherry", "blueberry"], lambda s: s[0])
    {'a': ['apple', 'avocado'], 'b': ['banana', 'blueberry'], 'c': ['cherry']}
    """
    if not callable(key):
        raise TypeError("key must be callable")
    groups = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


def count_by(items, key):
    """Count ``items`` per ``key(item)``; the result is sorted by key.

    >>> count_by([1, 2, 3, 4, 5, 6, 7], lambda n: n % 3)
    {0: 2, 1: 3, 2: 2}
    """
    counts = {}
    for item in items:
        k = key(item)
        counts[k] = counts.get(k, 0) + 1
    return dict(sorted(counts.items()))


def partition(pred, items):
    """Split ``items`` into ``(matching, not_matching)`` lists, keeping their order.

    >>> partition(str.isdigit, ["1", "a", "22", "b"])
    (['1', '22'], ['a', 'b'])
    """
    matching = []
    rest = []
    for item in items:
        (matching if pred(item) else rest).append(item)
    return matching, rest


def fold(func, items, initial=_MISSING):
    """Left fold: ``func(func(func(initial, x0), x1), x2)...``.

    Without ``initial`` the first item is the start value, and an empty ``items`` is an error.

    >>> fold(lambda acc, x: acc * 10 + x, [1, 2, 3])
    123
    >>> fold(lambda acc, x: acc + [x], "ab", [])
    ['a', 'b']
    """
    iterator = iter(items)
    if initial is _MISSING:
        try:
            accumulator = next(iterator)
        except StopIteration:
            raise TypeError("fold() of an empty sequence with no initial value") from None
    else:
        accumulator = initial
    for item in iterator:
        accumulator = func(accumulator, item)
    return accumulator


def apply_n(func, value, n):
    """Apply ``func`` to ``value`` ``n`` times: ``func(func(...func(value)))``.

    >>> apply_n(lambda x: x * 2, 1, 10)
    1024
    """
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError("n must be an int")
    if n < 0:
        raise ValueError("n must be >= 0")
    for _ in range(n):
        value = func(value)
    return value


def pipe(value, *funcs):
    """Pass ``value`` through ``funcs`` from left to right.

    >>> pipe("  Hello ", str.strip, str.upper, len)
    5
    """
    result = value
    for position, func in enumerate(funcs):
        if not callable(func):
            raise TypeError(f"pipe() step {position} is not callable")
        result = func(result)
    return result


def compose(*funcs):
    """Compose functions right to left: ``compose(f, g)(x) == f(g(x))``.

    >>> compose(len, str.strip)("  abc ")
    3
    """
    if not funcs:
        raise TypeError("compose() needs at least one function")
    steps = tuple(reversed(funcs))

    def composed(*args, **kwargs):
        result = steps[0](*args, **kwargs)
        for step in steps[1:]:
            result = step(result)
        return result

    return composed


def find_first(pred, items, default=None):
    """Return the first item for which ``pred`` is true, or ``default``.

    >>> find_first(lambda n: n > 3, [1, 5, 2, 7])
    5
    """
    if not callable(pred):
        raise TypeError("pred must be callable")
    for item in items:
        if pred(item):
            return item
    return default


def zip_with(func, *iterables):
    """Combine the iterables element-wise with ``func``, stopping at the shortest.

    >>> zip_with(max, [1, 5, 3], [4, 2, 6])
    [4, 5, 6]
    """
    if not iterables:
        raise TypeError("zip_with() needs at least one iterable")
    results = []
    for args in zip(*iterables):
        results.append(func(*args))
    return results


def map_values(func, mapping):
    """New dict with the same keys and ``func`` applied to every value.

    >>> map_values(len, {"a": "xyz", "b": ""})
    {'a': 3, 'b': 0}
    """
    if not hasattr(mapping, "items"):
        raise TypeError("map_values() expects a mapping")
    result = {}
    for key, value in mapping.items():
        result[key] = func(value)
    return result
