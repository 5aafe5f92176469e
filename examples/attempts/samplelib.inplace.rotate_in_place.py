# attempt: correct — moves the tail slice to the front with del and slice insertion
def rotate_in_place(items, k):
    """Rotate the list ``items`` right by ``k`` places, in place."""
    if not isinstance(items, list):
        raise TypeError("expected a list")
    size = len(items)
    if size == 0:
        return None
    shift = k % size
    if shift:
        tail = items[size - shift :]
        del items[size - shift :]
        items[0:0] = tail
    return None
