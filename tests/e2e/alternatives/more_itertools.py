"""Correct re-implementations of more-itertools 10.5.0 targets, written differently.

Each body keeps the original's contract (argument validation and its order, exception types,
what is evaluated at call time and what lazily, what it consumes from iterators) but gets there by
another algorithm or another control flow.  Keys are target symbols; values are candidate texts
as an agent would submit them (a bare definition, imports allowed; the module's own names such
as `_marker` are in scope).
"""

from __future__ import annotations

ALTERNATIVES: dict[str, str] = {
    # A counting loop instead of sum(compress(repeat(1), zip(iterable))).
    "more_itertools.more.ilen": """
def ilen(iterable):
    count = 0
    for _ in iterable:
        count += 1
    return count
""",
    # An explicit iterator and next() instead of returning from inside a for loop.
    "more_itertools.more.first": """
def first(iterable, default=_marker):
    it = iter(iterable)
    try:
        return next(it)
    except StopIteration:
        if default is _marker:
            raise ValueError("empty") from None
        return default
""",
    # At most two items read through islice and decided on the count, instead of two next() calls.
    "more_itertools.more.one": """
from itertools import islice

def one(iterable, too_short=None, too_long=None):
    head = list(islice(iter(iterable), 2))
    if not head:
        raise too_short or ValueError("too few items in iterable (expected 1)")
    if len(head) > 1:
        raise too_long or ValueError("Expected exactly one item in iterable")
    return head[0]
""",
    # Each column compared with its head in a plain loop, instead of all(map(all_equal, ...)).
    "more_itertools.more.iequals": """
from itertools import zip_longest

def iequals(*iterables):
    missing = object()
    for column in zip_longest(*iterables, fillvalue=missing):
        head = column[0]
        for other in column[1:]:
            if other is not head and not head == other:
                return False
    return True
""",
    # One pass remembering the previous item, instead of comparing two tee'd iterators.
    "more_itertools.more.is_sorted": """
def is_sorted(iterable, key=None, reverse=False, strict=False):
    items = iter(iterable) if key is None else map(key, iterable)
    empty = object()
    previous = next(items, empty)
    if previous is empty:
        return True
    for current in items:
        low, high = (previous, current) if reverse else (current, previous)
        if (low <= high) if strict else (low < high):
            return False
        previous = current
    return True
""",
    # A nested generator expression instead of chain.from_iterable(map(repeat, ...)); the count
    # still goes through repeat() so that a huge n overflows the same way.
    "more_itertools.more.repeat_each": """
from itertools import repeat

def repeat_each(iterable, n=2):
    items = iter(iterable)
    return (item for item in items for _ in repeat(None, n))
""",
    # A list of already-seen items searched by `in`, instead of a set with a list fallback.
    "more_itertools.more.all_unique": """
def all_unique(iterable, key=None):
    seen = []
    for element in map(key, iterable) if key else iterable:
        if element in seen:
            return False
        seen.append(element)
    return True
""",
    # Windows of every width cut by zip over shifted copies, after a lazy first pass.
    "more_itertools.more.substrings": """
def substrings(iterable):
    seen = []
    for item in iterable:
        seen.append(item)
        yield (item,)
    for width in range(2, len(seen) + 1):
        yield from zip(*(seen[shift:] for shift in range(width)))
""",
    # A generator loop instead of chain.from_iterable.
    "more_itertools.recipes.flatten": """
def flatten(listOfLists):
    for inner in listOfLists:
        yield from inner
""",
    # An indexed loop with an explicit degree instead of map(mul, coefficients, powers).
    "more_itertools.recipes.polynomial_derivative": """
def polynomial_derivative(coefficients):
    degree = len(coefficients) - 1
    result = []
    for index, c in enumerate(coefficients):
        power = degree - index
        if power < 1:
            break
        result.append(c * power)
    return result
""",
    # A running total instead of the sum of a tee'd iterator multiplied by itself.
    "more_itertools.recipes.sum_of_squares": """
def sum_of_squares(it):
    total = 0
    for value in it:
        total = total + value * value
    return total
""",
    # Nested index loops instead of starmap(slice, combinations(...)).
    "more_itertools.recipes.subslices": """
def subslices(iterable):
    seq = list(iterable)

    def slices():
        for start in range(len(seq)):
            for stop in range(start + 1, len(seq) + 1):
                yield seq[start:stop]

    return slices()
""",
    # Euler's product by trial division instead of the set of prime factors from a sieve.
    "more_itertools.recipes.totient": """
import math

def totient(n):
    math.isqrt(n)
    result, rest, p = n, n, 2
    while p * p <= rest:
        if rest % p == 0:
            while rest % p == 0:
                rest //= p
            result -= result // p
        p += 1
    if rest > 1:
        result -= result // rest
    return result
""",
    # The first element of each run by remembering the run's key, instead of groupby.
    "more_itertools.recipes.unique_justseen": """
def unique_justseen(iterable, key=None):
    items = iter(iterable)

    def runs():
        started = False
        run_key = None
        for item in items:
            k = item if key is None else key(item)
            if started and (run_key is k or run_key == k):
                continue
            started, run_key = True, k
            yield item

    return runs()
""",
    # Compare everything with the first item in a loop instead of counting groupby groups.
    "more_itertools.recipes.all_equal": """
def all_equal(iterable, key=None):
    items = iter(iterable) if key is None else map(key, iterable)
    empty = object()
    head = next(items, empty)
    for item in items:
        if item is not head and not head == item:
            return False
    return True
""",
    # Round-robin over a list of live iterators, instead of cycling islices of a cycle.
    "more_itertools.recipes.roundrobin": """
def roundrobin(*iterables):
    live = []
    for iterable in iterables:
        it = iter(iterable)
        for value in it:
            yield value
            live.append(it)
            break
    while live:
        still = []
        for it in live:
            for value in it:
                yield value
                still.append(it)
                break
        live = still
""",
}
