# attempt: partial — returns 0.0 for an empty sequence instead of raising ValueError
def mean(values):
    """Arithmetic mean of ``values`` as a float."""
    items = list(values)
    count = len(items)
    if count == 0:
        return 0.0
    return math.fsum(items) / count
