# attempt: wrong — off by one everywhere: chunks of size + 1, and size 0 is accepted
def chunked(items, size):
    """Yield lists of ``size`` consecutive items."""
    if size < 0:
        raise ValueError("size must be at least 1")
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) > size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
