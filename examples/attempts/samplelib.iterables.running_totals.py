# attempt: correct — delegates to itertools.accumulate, which has the same initial semantics
def running_totals(values, func=operator.add, initial=None):
    """Yield the running combination of ``values`` with ``func``."""
    import itertools

    yield from itertools.accumulate(values, func, initial=initial)
