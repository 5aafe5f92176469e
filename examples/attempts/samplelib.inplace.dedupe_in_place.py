# attempt: partial — returns the right count but rebinds a new list instead of mutating `items`
def dedupe_in_place(items, key=None):
    """Remove later duplicates from ``items``; return how many were removed."""
    if not isinstance(items, list):
        raise TypeError("dedupe_in_place() needs a list")
    unique = []
    markers = []
    for item in items:
        marker = key(item) if key is not None else item
        if marker not in markers:
            markers.append(marker)
            unique.append(item)
    removed = len(items) - len(unique)
    items = unique
    return removed
