# attempt: wrong — takes the middle of the unsorted input, and an empty input raises IndexError
def median(values):
    """Median of a non-empty sequence."""
    items = list(values)
    middle = len(items) // 2
    if len(items) % 2 == 1:
        return items[middle]
    return (items[middle - 1] + items[middle]) / 2
