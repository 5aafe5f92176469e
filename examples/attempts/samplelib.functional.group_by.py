# attempt: correct — explicit membership test instead of dict.setdefault
def group_by(items, key):
    """Group ``items`` into a dict ``key(item) -> [items...]``, keys in first-seen order."""
    if not callable(key):
        raise TypeError("key is not callable")
    result = {}
    for item in items:
        group_key = key(item)
        if group_key in result:
            result[group_key].append(item)
        else:
            result[group_key] = [item]
    return result
