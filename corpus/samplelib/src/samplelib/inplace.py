"""Operations that change their arguments in place: lists and (nested) dicts."""


def dedupe_in_place(items, key=None):
    """Remove later duplicates from the list ``items`` in place; return how many were removed.

    >>> data = [3, 1, 3, 2, 1]
    >>> dedupe_in_place(data), data
    (2, [3, 1, 2])
    """
    if not isinstance(items, list):
        raise TypeError("dedupe_in_place() needs a list")
    seen = []
    kept = []
    for item in items:
        marker = item if key is None else key(item)
        if marker not in seen:
            seen.append(marker)
            kept.append(item)
    removed = len(items) - len(kept)
    items[:] = kept
    return removed


def rotate_in_place(items, k):
    """Rotate the list ``items`` right by ``k`` places (left for negative ``k``), in place.

    >>> data = [1, 2, 3, 4, 5]
    >>> rotate_in_place(data, 2)
    >>> data
    [4, 5, 1, 2, 3]
    """
    if not isinstance(items, list):
        raise TypeError("rotate_in_place() needs a list")
    if not items:
        return
    k %= len(items)
    items[:] = items[-k:] + items[:-k]


def merge_into(target, *sources, overwrite=True):
    """Copy the keys of every source into ``target`` and return ``target``.

    With ``overwrite=False`` keys already in ``target`` keep their value.

    >>> base = {"a": 1}
    >>> merge_into(base, {"a": 2, "b": 3}, overwrite=False) is base, base
    (True, {'a': 1, 'b': 3})
    """
    if not isinstance(target, dict):
        raise TypeError("merge_into() target must be a dict")
    for source in sources:
        for key, value in source.items():
            if overwrite or key not in target:
                target[key] = value
    return target


def deep_merge(target, source):
    """Recursively merge ``source`` into ``target`` (nested dicts merge, other values replace).

    Nested dicts from ``source`` are copied, so later changes to ``source`` do not leak in.

    >>> cfg = {"db": {"host": "x", "port": 1}, "debug": False}
    >>> deep_merge(cfg, {"db": {"port": 2}, "debug": True})
    {'db': {'host': 'x', 'port': 2}, 'debug': True}
    """
    if not isinstance(target, dict) or not isinstance(source, dict):
        raise TypeError("deep_merge() merges a dict into a dict")
    for key, value in source.items():
        existing = target.get(key)
        if isinstance(existing, dict) and isinstance(value, dict):
            deep_merge(existing, value)
        elif isinstance(value, dict):
            target[key] = deep_merge({}, value)
        else:
            target[key] = value
    return target


def remove_where(items, pred):
    """Delete the items of the list ``items`` for which ``pred`` is true; return them in order.

    >>> data = [1, 2, 3, 4, 5, 6]
    >>> remove_where(data, lambda n: n % 2 == 0), data
    ([2, 4, 6], [1, 3, 5])
    """
    removed = []
    index = 0
    while index < len(items):
        if pred(items[index]):
            removed.append(items.pop(index))
        else:
            index += 1
    return removed


def set_nested(mapping, path, value):
    """Set ``mapping[p0][p1]...[pn] = value``, creating missing intermediate dicts.

    ``path`` is a dotted string or a sequence of keys.  A non-dict value in the way is a
    ``TypeError``; an empty path is a ``ValueError``.

    >>> cfg = {}
    >>> set_nested(cfg, "server.http.port", 8080)
    >>> cfg
    {'server': {'http': {'port': 8080}}}
    """
    keys = path.split(".") if isinstance(path, str) else list(path)
    if not keys or keys == [""]:
        raise ValueError("empty path")
    node = mapping
    for key in keys[:-1]:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise TypeError(f"{key!r} holds a {type(child).__name__}, not a dict")
        node = child
    node[keys[-1]] = value


def pop_nested(mapping, path):
    """Remove and return the value at a dotted ``path``; drop dicts the removal leaves empty.

    A missing key is a ``KeyError`` naming the full path.

    >>> cfg = {"a": {"b": {"c": 1}}, "x": 0}
    >>> pop_nested(cfg, "a.b.c"), cfg
    (1, {'x': 0})
    """
    keys = path.split(".")
    trail = [mapping]
    for key in keys[:-1]:
        child = trail[-1].get(key)
        if not isinstance(child, dict):
            raise KeyError(path)
        trail.append(child)
    if keys[-1] not in trail[-1]:
        raise KeyError(path)
    value = trail[-1].pop(keys[-1])
    for depth in range(len(trail) - 1, 0, -1):
        if trail[depth]:
            break
        del trail[depth - 1][keys[depth - 1]]
    return value
