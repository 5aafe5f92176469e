# attempt: partial — uses binary-float round(), so 2.675 gives 2.67 where the decimal text says 2.68
def round_half_even(x, ndigits=0):
    """Round ``x`` to ``ndigits`` decimals, ties to even."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError("x must be a real number")
    if x != x or x in (float("inf"), float("-inf")):
        return float(x)
    return float(round(x, ndigits))
