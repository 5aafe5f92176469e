"""Correct re-implementations of bundled-corpus targets (corpus/samplelib), written differently.

Each body keeps the original's contract (argument validation and its order, exception types,
laziness, what it consumes from iterators, how it mutates its arguments) but gets there by
another algorithm or another control flow.  Keys are target symbols; values are candidate texts
as an agent would submit them (a bare definition, imports allowed).
"""

from __future__ import annotations

ALTERNATIVES: dict[str, str] = {
    # Euclid's algorithm by hand instead of math.gcd.
    "samplelib.numeric.gcd_list": """
def gcd_list(values):
    items = list(values)
    if not items:
        raise ValueError("empty")
    result = 0
    for value in items:
        a, b = abs(result), abs(_require_int(value, "value"))
        while b:
            a, b = b, a % b
        result = a
    return result
""",
    # The closed form 1 + (n - 1) % 9 instead of summing digits until one remains.
    "samplelib.numeric.digital_root": """
def digital_root(n):
    n = abs(_require_int(n, "n"))
    return 0 if n == 0 else 1 + (n - 1) % 9
""",
    # Bit operations and a `> 1` loop test.
    "samplelib.numeric.collatz_steps": """
def collatz_steps(n):
    _require_int(n, "n")
    if n < 1:
        raise ValueError("positive only")
    count = 0
    while n > 1:
        n = (3 * n + 1) if n & 1 else n >> 1
        count += 1
    return count
""",
    # Trial division over a 6k +/- 1 wheel instead of odd numbers.
    "samplelib.numeric.is_prime": """
def is_prime(n):
    _require_int(n, "n")
    if n <= 3:
        return n > 1
    if n % 2 == 0 or n % 3 == 0:
        return False
    k = 5
    while k * k <= n:
        if n % k == 0 or n % (k + 2) == 0:
            return False
        k += 6
    return True
""",
    # Divide by every candidate divisor in turn (divmod, no inner loop, no step of 2).
    "samplelib.numeric.prime_factors": """
def prime_factors(n):
    _require_int(n, "n")
    if n < 1:
        raise ValueError("positive only")
    factors = []
    divisor = 2
    while n > 1:
        if divisor * divisor > n:
            factors.append(n)
            break
        quotient, remainder = divmod(n, divisor)
        if remainder:
            divisor += 1
        else:
            factors.append(divisor)
            n = quotient
    return factors
""",
    # Both middle elements picked by index arithmetic, no branch on the index.
    "samplelib.numeric.median": """
def median(values):
    ordered = sorted(values)
    count = len(ordered)
    if count == 0:
        raise ValueError("empty")
    low, high = ordered[(count - 1) // 2], ordered[count // 2]
    return low if count % 2 else (low + high) / 2
""",
    # Pairs from a flag instead of a sentinel and an explicit first next().
    "samplelib.iterables.pairwise": """
def pairwise(items):
    started = False
    previous = None
    for item in items:
        if started:
            yield previous, item
        previous, started = item, True
""",
    # A nested loop that breaks out on a full chunk instead of one flat loop.
    "samplelib.iterables.chunked": """
def chunked(items, size):
    if size < 1:
        raise ValueError("bad size")
    source = iter(items)
    while True:
        chunk = []
        for item in source:
            chunk.append(item)
            if len(chunk) == size:
                break
        if not chunk:
            return
        yield chunk
        if len(chunk) != size:
            return
""",
    # Rounds over a list of live iterators instead of a rotating deque.
    "samplelib.iterables.interleave": """
def interleave(*iterables, longest=True):
    live = [iter(it) for it in iterables]
    while live:
        still = []
        for current in live:
            for value in current:
                yield value
                still.append(current)
                break
            else:
                if not longest:
                    return
        live = still
""",
    # The whole (len(a)+1) x (len(b)+1) table instead of two rolling rows.
    "samplelib.text.levenshtein": """
def levenshtein(a, b):
    rows, cols = len(a) + 1, len(b) + 1
    first, second = list(a), list(b)
    table = [[0] * cols for _ in range(rows)]
    for i in range(rows):
        table[i][0] = i
    for j in range(cols):
        table[0][j] = j
    for i in range(1, rows):
        for j in range(1, cols):
            cost = 0 if first[i - 1] == second[j - 1] else 1
            table[i][j] = min(
                table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost
            )
    return table[-1][-1]
""",
    # Runs of equal items found by itertools.groupby over the indices, instead of a nested scan.
    "samplelib.text.rle_encode": """
from itertools import groupby

def rle_encode(text):
    if any(ch.isdigit() for ch in text):
        raise ValueError("digits")
    runs = groupby(range(len(text)), key=lambda index: text[index])
    return "".join(f"{len(list(run))}{ch}" for ch, run in runs)
""",
    # Scans a run of digits with an inner index loop instead of a digit accumulator (indexes
    # its argument, so it matches on strings and sequences of strings, the documented input).
    "samplelib.text.rle_decode": """
def rle_decode(encoded):
    out = []
    i, n = 0, len(encoded)
    while i < n:
        j = i
        while j < n and encoded[j].isdigit():
            j += 1
        if j == n:
            if j > i:
                raise ValueError("dangling count")
            break
        if j == i:
            raise ValueError("missing count")
        out.append(encoded[j] * int("".join(encoded[i:j])))
        i = j + 1
    return "".join(out)
""",
    # Columns through zip(*items) instead of indexing from the shortest string.
    "samplelib.text.common_prefix": """
def common_prefix(strings):
    items = list(strings)
    if not items:
        return ""
    width = 0
    for column in zip(*items):
        if any(ch != column[0] for ch in column):
            break
        width += 1
    return min(items, key=len)[:width]
""",
    # Marks the indices to delete, then deletes them back to front (no slice assignment).
    "samplelib.inplace.dedupe_in_place": """
def dedupe_in_place(items, key=None):
    if not isinstance(items, list):
        raise TypeError("needs a list")
    seen = []
    doomed = []
    for index, item in enumerate(items):
        marker = item if key is None else key(item)
        if marker in seen:
            doomed.append(index)
        else:
            seen.append(marker)
    for index in reversed(doomed):
        del items[index]
    return len(doomed)
""",
    # Three reversals instead of concatenating two slices.
    "samplelib.inplace.rotate_in_place": """
import operator

def rotate_in_place(items, k):
    if not isinstance(items, list):
        raise TypeError("needs a list")
    if not items:
        return
    k = operator.index(k % len(items))
    items.reverse()
    items[:k] = items[:k][::-1]
    items[k:] = items[k:][::-1]
""",
}
