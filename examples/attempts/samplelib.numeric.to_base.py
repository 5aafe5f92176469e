# attempt: partial — right for n >= 0, but drops the '-' sign of negative numbers
def to_base(n, base):
    """Write the integer ``n`` in ``base``."""
    _require_int(n, "n")
    if base < 2 or base > 36:
        raise ValueError("base out of range")
    n = abs(n)
    out = ""
    while True:
        n, digit = divmod(n, base)
        out = _DIGITS[digit] + out
        if n == 0:
            return out
