"""Integer and float arithmetic: divisors, primes, bases, rounding, statistics, interpolation."""

import math
from decimal import ROUND_HALF_EVEN, Decimal

_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _require_int(value, name):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    return value


def gcd_list(values):
    """Greatest common divisor of a non-empty sequence of integers (always >= 0).

    >>> gcd_list([12, 18, -24])
    6
    """
    items = list(values)
    if not items:
        raise ValueError("gcd_list() of an empty sequence")
    result = 0
    for value in items:
        result = math.gcd(result, _require_int(value, "value"))
    return result


def lcm_list(values):
    """Least common multiple of a non-empty sequence of integers (0 if any is 0).

    >>> lcm_list([4, 6, 10])
    60
    """
    items = list(values)
    if not items:
        raise ValueError("lcm_list() of an empty sequence")
    result = 1
    for value in items:
        value = abs(_require_int(value, "value"))
        if value == 0:
            return 0
        result = result * value // math.gcd(result, value)
    return result


def is_prime(n):
    """True if ``n`` is a prime number (False for anything below 2).

    >>> [k for k in range(20) if is_prime(k)]
    [2, 3, 5, 7, 11, 13, 17, 19]
    """
    _require_int(n, "n")
    if n < 4:
        return n >= 2
    if n % 2 == 0:
        return False
    divisor = 3
    while divisor * divisor <= n:
        if n % divisor == 0:
            return False
        divisor += 2
    return True


def prime_factors(n):
    """Prime factors of ``n`` >= 1 in ascending order, with multiplicity.

    >>> prime_factors(360)
    [2, 2, 2, 3, 3, 5]
    >>> prime_factors(1)
    []
    """
    _require_int(n, "n")
    if n < 1:
        raise ValueError("prime_factors() needs a positive integer")
    factors = []
    divisor = 2
    while divisor * divisor <= n:
        while n % divisor == 0:
            factors.append(divisor)
            n //= divisor
        divisor += 1 if divisor == 2 else 2
    if n > 1:
        factors.append(n)
    return factors


def to_base(n, base):
    """Write the integer ``n`` in ``base`` (2..36) with lowercase digits and a leading '-'.

    >>> to_base(255, 16)
    'ff'
    >>> to_base(-10, 2)
    '-1010'
    """
    _require_int(n, "n")
    if not 2 <= base <= 36:
        raise ValueError("base must be between 2 and 36")
    if n == 0:
        return "0"
    digits = []
    remaining = abs(n)
    while remaining:
        remaining, digit = divmod(remaining, base)
        digits.append(_DIGITS[digit])
    sign = "-" if n < 0 else ""
    return sign + "".join(reversed(digits))


def from_base(text, base):
    """Parse ``text`` written in ``base`` (2..36); case-insensitive, optional sign.

    >>> from_base("-FF", 16)
    -255
    """
    if not 2 <= base <= 36:
        raise ValueError("base must be between 2 and 36")
    cleaned = text.strip().lower()
    negative = cleaned[:1] == "-"
    body = cleaned[1:] if cleaned[:1] in ("-", "+") else cleaned
    if not body:
        raise ValueError(f"no digits in {text!r}")
    value = 0
    for ch in body:
        digit = _DIGITS.find(ch)
        if digit < 0 or digit >= base:
            raise ValueError(f"invalid digit {ch!r} for base {base}")
        value = value * base + digit
    return -value if negative else value


def clamp(value, low, high):
    """Limit ``value`` to the closed range ``[low, high]``.

    >>> clamp(15, 0, 10), clamp(-3, 0, 10), clamp(2.5, 0, 10)
    (10, 0, 2.5)
    """
    if low > high:
        raise ValueError(f"empty range: {low} > {high}")
    if value < low:
        return low
    if value > high:
        return high
    return value


def round_half_even(x, ndigits=0):
    """Round ``x`` to ``ndigits`` decimals, ties to even, using the shortest decimal repr of x.

    Unlike :func:`round`, 2.675 rounds to 2.68 because it is written 2.675.

    >>> round_half_even(2.5), round_half_even(3.5), round_half_even(2.675, 2)
    (2.0, 4.0, 2.68)
    """
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError("x must be a real number")
    if math.isnan(x) or math.isinf(x):
        return float(x)
    quantum = Decimal(1).scaleb(-ndigits)
    rounded = Decimal(repr(x)).quantize(quantum, rounding=ROUND_HALF_EVEN)
    return float(rounded)


def mean(values):
    """Arithmetic mean of a non-empty sequence, as a float.

    >>> mean([1, 2, 3, 4])
    2.5
    """
    items = list(values)
    if not items:
        raise ValueError("mean() of an empty sequence")
    total = math.fsum(items)
    return total / len(items)


def median(values):
    """Median of a non-empty sequence; the mean of the two middle values for even lengths.

    >>> median([3, 1, 2]), median([4, 1, 3, 2])
    (2, 2.5)
    """
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median() of an empty sequence")
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def variance(values, sample=False):
    """Population variance of ``values`` (sample variance, n - 1 denominator, with ``sample``).

    >>> variance([2, 4, 4, 4, 5, 5, 7, 9])
    4.0
    """
    items = [float(v) for v in values]
    needed = 2 if sample else 1
    if len(items) < needed:
        raise ValueError(f"variance() needs at least {needed} values")
    centre = math.fsum(items) / len(items)
    squares = math.fsum((v - centre) ** 2 for v in items)
    return squares / (len(items) - 1 if sample else len(items))


def interpolate(xs, ys, x):
    """Piecewise-linear interpolation of the points ``(xs[i], ys[i])`` at ``x``.

    ``xs`` must be strictly increasing; ``x`` outside ``[xs[0], xs[-1]]`` is an error.

    >>> interpolate([0, 10, 20], [0.0, 100.0, 50.0], 15)
    75.0
    """
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError("need at least two points and as many xs as ys")
    if any(b <= a for a, b in zip(xs, xs[1:])):
        raise ValueError("xs must be strictly increasing")
    if not xs[0] <= x <= xs[-1]:
        raise ValueError(f"{x} is outside [{xs[0]}, {xs[-1]}]")
    i = 1
    while xs[i] < x:
        i += 1
    fraction = (x - xs[i - 1]) / (xs[i] - xs[i - 1])
    return ys[i - 1] + fraction * (ys[i] - ys[i - 1])


def collatz_steps(n):
    """Number of Collatz steps (n -> n/2 or 3n+1) needed to reach 1 from ``n`` >= 1.

    >>> collatz_steps(27)
    111
    """
    _require_int(n, "n")
    if n < 1:
        raise ValueError("collatz_steps() needs a positive integer")
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def digital_root(n):
    """Repeatedly sum the decimal digits of ``abs(n)`` until one digit remains.

    >>> digital_root(493193)
    2
    """
    _require_int(n, "n")
    n = abs(n)
    while n >= 10:
        n = sum(int(d) for d in str(n))
    return n
